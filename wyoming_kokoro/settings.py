"""Server settings: one typed dataclass, built once from flags and environment.

Defaults come from the option table (options.py), the one place they are written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wyoming_kokoro import options as o


@dataclass(frozen=True)
class Settings:
    """Everything the server was configured with."""

    uri: str = o.URI.default
    zeroconf_name: str | None = None  # None: do not advertise
    zeroconf_address: str | None = None
    zeroconf_interfaces: tuple[str, ...] = ()
    voice: str | None = None
    speed: float = o.SPEED.default
    data_dirs: tuple[Path, ...] = ()
    model: Path | None = None
    voices: Path | None = None
    download: str | None = None
    download_url: str = o.DOWNLOAD_URL.default
    threads: int = o.THREADS.default  # 0: default_threads()
    idle_timeout: float = o.IDLE_TIMEOUT.default
    preload: bool = False
    prefork: bool = False  # a waiting parent forks workers: faster cold start, ~75 MB idle
    streaming: bool = True
    max_text_chars: int = o.MAX_TEXT_CHARS.default
    min_free_mb: int = o.MIN_FREE_MB.default
    connection_timeout: float = o.CONNECTION_TIMEOUT.default
    max_connections: int = o.MAX_CONNECTIONS.default
    normalize: bool = True
    max_call_tokens: int = o.MAX_CALL_TOKENS.default
    volume: float = o.VOLUME.default  # times the equal loudness of every voice
    lead_silence: int = o.LEAD_SILENCE.default  # ms before each request's speech
    tail_silence: int = o.TAIL_SILENCE.default  # ms after it
    decode: str = o.DECODE.default  # windows | whole: how a listener's first call is decoded
    # The OpenAI-compatible HTTP side (wyoming_kokoro/server/http/), off unless a URI is given
    http: str | None = None  # e.g. tcp://0.0.0.0:8880
    api_key: str | None = None  # bearer token the HTTP side requires, if set
    cors_origins: tuple[str, ...] = ()  # origins allowed by CORS; empty: CORS off
    debug: bool = False

    @property
    def effective_threads(self) -> int:
        return self.threads or o.default_threads()
