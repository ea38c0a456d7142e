"""Server settings: one typed dataclass, built once from flags and environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URI = "tcp://0.0.0.0:10200"

# Tokens per model call. The voices sound right from about 100 to 250 tokens
# (REFERENCE §4), but the worker's peak memory follows its longest call, because
# onnxruntime's arena keeps its high-water mark: about 400 MB at 120 tokens and
# 550 MB at 250. Longer calls cut a long clause between two words less often.
DEFAULT_CALL_TOKENS = 120
CALL_TOKENS_RANGE = (50, 500)  # the model's context is 510 phonemes


def default_threads() -> int:
    """Logical CPUs, at most 4: small boxes have 2-4 (on SMT machines this can exceed the
    physical cores that onnxruntime scales with; set --threads there)."""
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class Settings:
    """Everything the server was configured with."""

    uri: str = DEFAULT_URI
    zeroconf_name: str | None = None  # None: do not advertise
    zeroconf_address: str | None = None
    zeroconf_interfaces: tuple[str, ...] = ()
    voice: str | None = None
    speed: float = 1.0
    data_dirs: tuple[Path, ...] = ()
    model: Path | None = None
    voices: Path | None = None
    download: str | None = None
    download_url: str = ""
    threads: int = 0  # 0: default_threads()
    idle_timeout: float = 300.0
    preload: bool = False
    prefork: bool = False  # a waiting parent forks workers: faster cold start, ~75 MB idle
    streaming: bool = True
    max_text_chars: int = 100_000
    min_free_mb: int = 400
    connection_timeout: float = 600.0
    max_connections: int = 64
    normalize: bool = True
    max_call_tokens: int = DEFAULT_CALL_TOKENS
    # The OpenAI-compatible HTTP side (wyoming_kokoro/http/), off unless a URI is given
    http: str | None = None  # e.g. tcp://0.0.0.0:8880
    api_key: str | None = None  # bearer token the HTTP side requires, if set
    cors_origins: tuple[str, ...] = ()  # origins allowed by CORS; empty: CORS off
    debug: bool = False

    @property
    def effective_threads(self) -> int:
        return self.threads or default_threads()
