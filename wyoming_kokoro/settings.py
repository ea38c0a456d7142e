"""Server settings, built once from flags and environment, grouped per subsystem.

Each part of the server is handed its own group only (the scheduler never sees the
HTTP key, the HTTP door never sees the model paths). Defaults come from the option
table (options.py), the one place they are written; a field named like a flag takes
that flag's value as it is (`__main__.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from wyoming_kokoro import options as o
from wyoming_kokoro.cpus import automatic_threads


@dataclass(frozen=True)
class ModelSettings:
    """Where the model and voices come from."""

    data_dirs: tuple[Path, ...] = ()
    """Searched for model, voices, presets and lexicons; the first one is written to."""
    model: Path | None = None
    voices: Path | None = None
    download: str | None = None
    """A model to fetch into the first data dir at start (int8, fp16, fp32)."""
    download_url: str = o.DOWNLOAD_URL.default


@dataclass(frozen=True)
class WorkerSettings:
    """How the worker process speaks."""

    threads: int = o.THREADS.default
    """onnxruntime threads; 0: `effective_threads` picks."""
    normalize: bool = True
    max_call_tokens: int = o.MAX_CALL_TOKENS.default
    max_decode_seconds: float = o.MAX_DECODE_SECONDS.default
    """Calls longer than this decoded in windows (memory); 0: whole."""
    decode: str = o.DECODE.default
    """windows | whole: how a listener's first call is decoded."""

    @property
    def effective_threads(self) -> int:
        return self.threads or automatic_threads()


@dataclass(frozen=True)
class SchedulerSettings:
    """When the worker comes and goes."""

    idle_timeout: float = o.IDLE_TIMEOUT.default
    min_free_mb: int = o.MIN_FREE_MB.default
    prefork: bool = False
    """A waiting parent forks workers: faster cold start, ~75 MB while idle."""
    preload: bool = False


@dataclass(frozen=True)
class SpeechSettings:
    """What both doors speak with when a request does not say."""

    voice: str | None = None
    """None: the default voice of the installed ones."""
    speed: float = o.SPEED.default
    volume: float = o.VOLUME.default
    """Times the equal loudness of every voice."""
    lead_silence: int = o.LEAD_SILENCE.default
    tail_silence: int = o.TAIL_SILENCE.default
    streaming: bool = True
    phrase_wait: float = o.PHRASE_WAIT.default
    """Seconds a streamed first sentence is waited for before its opening phrase goes."""
    max_text_chars: int = o.MAX_TEXT_CHARS.default

    @property
    def max_text_json_bytes(self) -> int:
        """The longest request body that can carry `max_text_chars` characters as JSON,
        for both doors: a writer may escape every character as \\uXXXX, and one
        outside the BMP as two of them (12 bytes), plus room for the other fields."""
        return self.max_text_chars * 12 + 4096


@dataclass(frozen=True)
class ConnectionSettings:
    """Limits on clients, for both doors."""

    connection_timeout: float = o.CONNECTION_TIMEOUT.default
    max_connections: int = o.MAX_CONNECTIONS.default


@dataclass(frozen=True)
class WyomingSettings:
    """The Wyoming door."""

    uri: str = o.URI.default


@dataclass(frozen=True)
class HttpSettings:
    """The OpenAI-compatible HTTP door, off unless a URI is given."""

    uri: str | None = None
    """e.g. tcp://0.0.0.0:8880"""
    api_key: str | None = None
    """The bearer token required, if set (an empty one is none)."""
    cors_origins: tuple[str, ...] = ()
    """Origins CORS allows; empty: CORS off."""


@dataclass(frozen=True)
class DiscoverySettings:
    """Zeroconf advertisement of the Wyoming door."""

    name: str | None = None
    """None: not advertised."""
    address: str | None = None
    interfaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    """Everything the server was configured with, one group per subsystem."""

    model: ModelSettings = field(default_factory=ModelSettings)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)
    connections: ConnectionSettings = field(default_factory=ConnectionSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    discovery: DiscoverySettings = field(default_factory=DiscoverySettings)
    debug: bool = False
