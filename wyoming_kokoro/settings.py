"""Settings, built once from flags and environment, grouped per subsystem.

Each part is handed its own group only (the scheduler never sees the HTTP key, the
HTTP door never sees the model paths); a group travels whole to where it is used
(`EngineSettings` from the command line to the worker's engine). Both commands build
the groups they share (model, engine, speech) the same way (`from_params`). Defaults
come from the option table (options.py), the one place they are written; a field
takes the value of the option of its name, or of the option its metadata names
(`_from`), negated for a --no-... flag.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from wyoming_kokoro import options as o
from wyoming_kokoro.audio import Pauses
from wyoming_kokoro.cpus import automatic_threads
from wyoming_kokoro.flags import Option


def _from(option: Option | None, negated: bool = False) -> dict[str, Any]:
    """A field's source: another option than the one of its name (None: no option)."""
    return {"option": None if option is None else option.name, "negated": negated}


@dataclass(frozen=True)
class ModelSettings:
    """Where the model and voices come from."""

    data_dirs: tuple[Path, ...] = field(default=(), metadata=_from(o.DATA_DIR))
    """Searched for model, voices, presets and lexicons; the first one is written to."""
    model: Path | None = None
    voices: Path | None = None
    download: str | None = None
    """A model to fetch into the first data dir at start (int8, fp16, fp32)."""
    download_url: str = o.DOWNLOAD_URL.default


@dataclass(frozen=True)
class EngineSettings:
    """How the engine speaks: in the server's worker and in kokoro-say alike."""

    threads: int = o.THREADS.default
    """onnxruntime threads; 0: `effective_threads` picks."""
    normalize: bool = field(default=True, metadata=_from(o.NO_NORMALIZE, negated=True))
    max_call_tokens: int = o.MAX_CALL_TOKENS.default
    max_decode_seconds: float = o.MAX_DECODE_SECONDS.default
    """Calls longer than this decoded in windows (memory); 0: whole."""
    decode: str = o.DECODE.default
    """windows | whole: how a listener's first call is decoded."""
    optimized_copy: bool = field(default=True, metadata=_from(None))
    """Keep an optimized copy of the model beside the cache (faster loads)."""

    def __post_init__(self) -> None:
        o.MAX_CALL_TOKENS.check(self.max_call_tokens)
        o.MAX_DECODE_SECONDS.check(self.max_decode_seconds)
        if self.decode not in o.DECODE.choices:
            raise ValueError(f"decode must be one of {o.DECODE.choices}, got {self.decode}")

    @property
    def effective_threads(self) -> int:
        return self.threads or automatic_threads()


@dataclass(frozen=True)
class SchedulerSettings:
    """When the worker comes and goes."""

    idle_timeout: float = o.IDLE_TIMEOUT.default
    min_free_mb: int = o.MIN_FREE_MB.default
    prefork: bool = False
    """A waiting parent forks workers: faster cold start, more memory while idle."""
    preload: bool = False
    teaching: bool = field(default=True, metadata=_from(o.NO_TEACHING, negated=True))
    """Teach every voice in a process of its own when the CPU would otherwise idle."""


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
    sentence_pause: int = o.SENTENCE_PAUSE.default
    """Milliseconds after a sentence's end, at speed 1.0 (a preset's or request's wins)."""
    paragraph_pause: int = o.PARAGRAPH_PAUSE.default
    """Milliseconds between paragraphs (a blank line), at least the sentence pause."""
    streaming: bool = field(default=True, metadata=_from(o.NO_STREAMING, negated=True))
    phrase_wait: float = o.PHRASE_WAIT.default
    """Seconds a streamed first sentence is waited for before its opening phrase goes."""
    word_events: bool = o.WORD_EVENTS.default
    """Wyoming: each word's time in an event of its own, between the audio chunks."""
    max_text_chars: int = o.MAX_TEXT_CHARS.default

    def __post_init__(self) -> None:
        self.pauses  # noqa: B018 (checked: out of range raises here, not mid-answer)

    @property
    def pauses(self) -> Pauses:
        """The sentence and paragraph pauses, as both doors and kokoro-say place them."""
        return Pauses(self.sentence_pause, self.paragraph_pause)

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

    uri: str | None = field(default=None, metadata=_from(o.HTTP))
    """e.g. tcp://0.0.0.0:8880"""
    api_key: str | None = None
    """The bearer token required, if set (an empty one is none)."""
    cors_origins: tuple[str, ...] = field(default=(), metadata=_from(o.CORS_ORIGIN))
    """Origins CORS allows; empty: CORS off."""
    ingress: str | None = field(default=None, metadata=_from(o.INGRESS))
    """Where the page and API are served for Home Assistant's ingress, keyless; None: not."""
    ingress_peer: str = field(default=o.INGRESS_PEER.default, metadata=_from(o.INGRESS_PEER))
    """The only address the ingress listener answers."""


@dataclass(frozen=True)
class DiscoverySettings:
    """Zeroconf advertisement of the Wyoming door."""

    name: str | None = field(default=None, metadata=_from(o.ZEROCONF))
    """None: not advertised."""
    address: str | None = field(default=None, metadata=_from(o.ZEROCONF_ADDRESS))
    interfaces: tuple[str, ...] = field(default=(), metadata=_from(o.ZEROCONF_INTERFACE))


@dataclass(frozen=True)
class Settings:
    """Everything the server was configured with, one group per subsystem."""

    model: ModelSettings = field(default_factory=ModelSettings)
    engine: EngineSettings = field(default_factory=EngineSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)
    connections: ConnectionSettings = field(default_factory=ConnectionSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    discovery: DiscoverySettings = field(default_factory=DiscoverySettings)
    debug: bool = False


Group = TypeVar("Group")


def option_of(setting: Field[Any]) -> tuple[str | None, bool]:
    """The option a setting comes from (None: no option) and whether it is negated."""
    return setting.metadata.get("option", setting.name), setting.metadata.get("negated", False)


def from_params(group: type[Group], params: dict[str, Any], **translated: Any) -> Group:
    """A settings group from a command's parsed options; a setting whose option the
    command lacks keeps its default (kokoro-say has no --decode); `translated` gives
    the fields whose option's value needs more than renaming."""
    values = dict(translated)
    for setting in fields(group):  # type: ignore[arg-type]
        name, negated = option_of(setting)
        if setting.name in values or name is None or name not in params:
            continue
        value = params[name]
        values[setting.name] = (not value) if negated else value
    return group(**values)
