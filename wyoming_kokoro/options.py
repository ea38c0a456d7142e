"""Every option of `wyoming-kokoro` and `kokoro-say`, defined once.

Each option's flag, type, range, default, help and environment variable live in
this table; both commands build their click options from it, `Settings` takes its
defaults from it, the engine checks ranges against it, and a test holds the
add-on's config.yaml and translations to it. Importing this module does not
import click (the worker imports it on the cold path); click is imported only
when a command builds its options.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from wyoming_kokoro.catalog.files import DEFAULT_DOWNLOAD_URL, MODEL_FILES

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Option:
    """One command-line option: the single place that says what it is."""

    flag: str  # "--speed"; the Python name and env var follow from it
    help: str
    kind: str = "str"  # str, int, float, path, choice or flag
    default: Any = None
    low: float | None = None  # inclusive range of an int or float
    high: float | None = None
    choices: tuple[str, ...] = ()
    multiple: bool = False
    metavar: str | None = None
    flag_value: str | None = None  # for an option whose value may be left out
    show_default: bool = True
    addon: str | None = None  # its name in addon/config.yaml, if the add-on offers it

    @property
    def name(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def envvar(self) -> str:
        return f"KOKORO_{self.name.upper()}"

    def check(self, value: float) -> None:
        """Raise ValueError if ``value`` is not finite or outside this option's range."""
        # NaN compares false with every bound, so it would pass the range check.
        if not math.isfinite(value):
            raise ValueError(f"{self.name} must be a finite number, got {value}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise ValueError(f"{self.name} must be {self.low}-{self.high}, got {value}")

    def click_type(self) -> Any:
        import click

        if self.kind == "int":
            low = None if self.low is None else int(self.low)
            high = None if self.high is None else int(self.high)
            return click.IntRange(low, high)
        if self.kind == "float":
            return _finite_float_range()(self.low, self.high)
        if self.kind == "path":
            return click.Path(path_type=Path)
        if self.kind == "choice":
            return click.Choice(self.choices)
        return None

    def decorator(self, short: str | None = None) -> Callable[[F], F]:
        import click

        names = [short, self.flag] if short else [self.flag]
        extra: dict[str, Any] = {}
        if self.kind == "flag":
            extra["is_flag"] = True
        elif self.flag_value is not None:
            extra.update(is_flag=False, flag_value=self.flag_value)
        else:
            extra["type"] = self.click_type()
        return click.option(
            *names,
            default=self.default,
            multiple=self.multiple,
            metavar=self.metavar,
            envvar=self.envvar,
            show_default=self.show_default and self.default not in (None, False, ()),
            show_envvar=True,
            help=self.help,
            **extra,
        )


@functools.cache
def _finite_float_range() -> type:
    """click.FloatRange that also refuses nan and ±inf (built lazily: click is imported
    only when a command builds its options)."""
    import click

    class FiniteFloatRange(click.FloatRange):
        def convert(self, value: Any, param: Any, ctx: Any) -> Any:
            number = click.FLOAT.convert(value, param, ctx)
            # NaN passes every range check; inf passes an open one.
            if not math.isfinite(number):
                self.fail(f"{value!r} is not a finite number.", param, ctx)
            return super().convert(number, param, ctx)

    return FiniteFloatRange


def apply(options: tuple[Option, ...], short: dict[str, str] | None = None) -> Callable[[F], F]:
    """Decorate a click command with ``options``, in order (``short``: extra short names)."""

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option.decorator((short or {}).get(option.name))(command)
        return command

    return decorate


def default_threads() -> int:
    """Logical CPUs, at most 4: small boxes have 2-4 (on SMT machines this can exceed the
    physical cores that onnxruntime scales with; set --threads there)."""
    return max(1, min(4, os.cpu_count() or 1))


# ---------------------------------------------------------------- shared by both commands
VOICE = Option("--voice", "Voice or blend, e.g. af_bella(2)+af_sky(1).", addon="voice")
SPEED = Option(
    "--speed", "Speaking rate; 1.0 is the voice's own.", "float", 1.0, 0.5, 2.0, addon="speed"
)
MODEL = Option("--model", "Model .onnx file.", "path")
VOICES = Option("--voices", "Voices .bin/.npz file.", "path")
DATA_DIR = Option(
    "--data-dir",
    "Where to look for model, voices and lexicon files (repeatable; the first one "
    "receives downloads).",
    "path",
    multiple=True,
)
THREADS = Option(
    "--threads", "onnxruntime threads; 0 = automatic.", "int", 0, 0, 64, addon="threads"
)
NO_NORMALIZE = Option("--no-normalize", "Do not rewrite numbers and symbols.", "flag", False)
# Tokens per model call. The voices sound right from about 100 to 250 tokens, but
# the worker's peak memory follows its longest call (its activations): about 420 MB
# at 120 tokens and 520 MB at 250 through the cut model (390 and 470 MB decoding
# whole calls). The model's context is 510 phonemes.
MAX_CALL_TOKENS = Option(
    "--max-call-tokens",
    "Longest model call; higher cuts long clauses less but needs more memory.",
    "int",
    120,
    50,
    500,
    addon="max_call_tokens",
)
# Speech the generator decodes at once. Its activations take about 0.6 MB a frame
# of 25 ms, so a long call decoded whole sets the worker's peak; in windows of at
# most this much (each decoded with the voice's learned statistics, as a
# listener's first call is) the peak on a 20,128-char text was 281 MB at 2.5 s
# instead of 425 MB, in 1.01x the time (the windows skip the leading pad's silence).
MAX_DECODE_SECONDS = Option(
    "--max-decode-seconds",
    "Longest speech decoded at once (0: every call whole). Longer calls are decoded in "
    "windows this long with the voice's learned statistics: less memory (about 290 MB "
    "at 2.5 s) in about the same time; at least 1 s.",
    "float",
    0.0,
    0.0,
    30.0,
    addon="max_decode_seconds",
)
# The volume multiplier a request, a preset or the server may ask for.
VOLUME_RANGE = (0.0, 4.0)
VOLUME = Option(
    "--volume",
    "Loudness multiplier on top of the equal loudness of every voice (1.0 = -20 LUFS); "
    "peaks are limited, never clipped.",
    "float",
    1.0,
    *VOLUME_RANGE,
    addon="volume",
)
LEAD_SILENCE = Option(
    "--lead-silence",
    "Milliseconds of silence before the speech of each request (speakers that wake late).",
    "int",
    0,
    0,
    5000,
    addon="lead_silence",
)
TAIL_SILENCE = Option(
    "--tail-silence",
    "Milliseconds of silence after the speech of each request (speakers that cut the end).",
    "int",
    0,
    0,
    5000,
    addon="tail_silence",
)
DOWNLOAD = Option(
    "--download",
    "Fetch the upstream model and voices into the first data dir if missing, verified.",
    "choice",
    choices=tuple(sorted(MODEL_FILES)),
)
DOWNLOAD_URL = Option(
    "--download-url", "Where --download fetches from.", default=DEFAULT_DOWNLOAD_URL
)
DEBUG = Option("--debug", "Log in detail.", "flag", False, addon="debug_logging")

SHARED = (
    VOICE,
    SPEED,
    MODEL,
    VOICES,
    DATA_DIR,
    THREADS,
    NO_NORMALIZE,
    MAX_CALL_TOKENS,
    MAX_DECODE_SECONDS,
    VOLUME,
    LEAD_SILENCE,
    TAIL_SILENCE,
    DOWNLOAD,
    DOWNLOAD_URL,
    DEBUG,
)

# ---------------------------------------------------------------- the server's own
URI = Option("--uri", "tcp://, unix:// or stdio://", default="tcp://0.0.0.0:10200")
ZEROCONF = Option(
    "--zeroconf",
    "Advertise over zeroconf (_wyoming._tcp), optionally under NAME.",
    metavar="[NAME]",
    flag_value="",
)
ZEROCONF_ADDRESS = Option(
    "--zeroconf-address", "Address to advertise (default: the outgoing interface)."
)
ZEROCONF_INTERFACE = Option(
    "--zeroconf-interface", "Interface address(es) for mDNS.", multiple=True
)
IDLE_TIMEOUT = Option(
    "--idle-timeout",
    "Seconds before an idle worker exits; 0 keeps the model loaded.",
    "float",
    300.0,
    0,
    86_400,
    addon="idle_timeout",
)
PRELOAD = Option("--preload", "Start the worker at start-up.", "flag", False)
PREFORK = Option(
    "--prefork",
    "Keep a small parent with the libraries imported that forks each worker: the first "
    "request after an idle unload is answered sooner (about 0.2 s here, more on a "
    "Raspberry Pi); costs about 75 MB while idle.",
    "flag",
    False,
    addon="prefork",
)
DECODE = Option(
    "--decode",
    "How the first call of an utterance is decoded: in windows (audio after its first "
    "0.4 s of speech is ready, the sentence spoken whole; later calls too when they would "
    "come late) or whole (the sentence cut into phrases so that its first call is short).",
    "choice",
    "windows",
    choices=("windows", "whole"),
)
PHRASE_WAIT = Option(
    "--phrase-wait",
    "Seconds a streamed first sentence is waited for before its opening phrase is spoken "
    "alone (a fast LLM's sentence is then spoken whole, with its prosody; 0: at once).",
    "float",
    0.2,
    0.0,
    10.0,
    addon="phrase_wait",
)
NO_STREAMING = Option(
    "--no-streaming", "Do not advertise streaming synthesis.", "flag", False, addon="streaming"
)
MAX_TEXT_CHARS = Option("--max-text-chars", "Longest text accepted.", "int", 100_000, 1)
MIN_FREE_MB = Option(
    "--min-free-mb", "Refuse to start the worker with less available memory.", "int", 400, 0
)
CONNECTION_TIMEOUT = Option(
    "--connection-timeout",
    "Close a connection that sends or reads nothing for this long (seconds).",
    "float",
    600.0,
    1,
)
MAX_CONNECTIONS = Option(
    "--max-connections", "Refuse further connections beyond this many at once.", "int", 64, 1
)
HTTP = Option(
    "--http",
    "Also serve the OpenAI-compatible HTTP API here, e.g. tcp://0.0.0.0:8880.",
    metavar="URI",
)
API_KEY = Option("--api-key", "Bearer token that HTTP requests must send.", addon="api_key")
CORS_ORIGIN = Option(
    "--cors-origin", "Origin allowed to call the HTTP API from a browser.", multiple=True
)

SERVER = (
    URI,
    ZEROCONF,
    ZEROCONF_ADDRESS,
    ZEROCONF_INTERFACE,
    *SHARED[:-1],
    IDLE_TIMEOUT,
    PRELOAD,
    PREFORK,
    DECODE,
    NO_STREAMING,
    PHRASE_WAIT,
    MAX_TEXT_CHARS,
    MIN_FREE_MB,
    CONNECTION_TIMEOUT,
    MAX_CONNECTIONS,
    HTTP,
    API_KEY,
    CORS_ORIGIN,
    DEBUG,
)
