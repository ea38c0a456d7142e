"""Every option of `wyoming-kokoro` and `kokoro-say`, defined once.

Each option's flag, type, range, default, help and environment variable live in
this table; both commands build their click options from it, `Settings` takes its
defaults from it, the engine checks ranges against it, and tests hold docs/options.md
and the add-on's config.yaml and translations to it. An `advanced` option (tuning and
limits) works as any other but is listed only by `--help-all`. Importing this module
does not import click (the worker imports it on the cold path); click is imported
only when a command builds its options.
"""

from __future__ import annotations

import functools
import math
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
    advanced: bool = False  # tuning or a limit: hidden from --help, shown by --help-all

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

    def decorator(self, short: str | None = None, hide_advanced: bool = False) -> Callable[[F], F]:
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
            # 0 is a default worth showing; None, off and nothing are not.
            show_default=self.show_default
            and self.default not in (None, ())
            and self.default is not False,
            show_envvar=True,
            help=self.help,
            hidden=self.advanced and hide_advanced,
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


def apply(
    options: tuple[Option, ...],
    short: dict[str, str] | None = None,
    *,
    hide_advanced: bool = False,
) -> Callable[[F], F]:
    """Decorate a click command with ``options``, in order (``short``: extra short names;
    ``hide_advanced``: leave the advanced ones out of --help, see `help_all`)."""

    def decorate(command: F) -> F:
        for option in reversed(options):
            name = (short or {}).get(option.name)
            command = option.decorator(name, hide_advanced)(command)
        return command

    return decorate


def help_all() -> Callable[[F], F]:
    """A `--help-all` flag: the command's help with its hidden (advanced) options too."""
    import click

    def show(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        hidden = [param for param in ctx.command.params if getattr(param, "hidden", False)]
        for param in hidden:
            param.hidden = False  # type: ignore[attr-defined]
        try:
            click.echo(ctx.get_help(), color=ctx.color)
        finally:
            for param in hidden:
                param.hidden = True  # type: ignore[attr-defined]
        ctx.exit()

    return click.option(
        "--help-all",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=show,
        help="Show every option, tuning and limits included, and exit.",
    )


# ---------------------------------------------------------------- shared by both commands
# One line of help each; docs/options.md says the rest (a test holds it to this table).
VOICE = Option("--voice", "Voice, blend (af_bella(2)+af_sky(1)) or preset.", addon="voice")
SPEED = Option(
    "--speed", "Speaking rate; 1.0 is the voice's own.", "float", 1.0, 0.5, 2.0, addon="speed"
)
MODEL = Option("--model", "Model .onnx file (wins over the data dirs).", "path", advanced=True)
VOICES = Option(
    "--voices", "Voices .bin/.npz file (wins over the data dirs).", "path", advanced=True
)
DATA_DIR = Option(
    "--data-dir",
    "Folder of model, voices, presets and lexicon (repeatable; downloads go to the first).",
    "path",
    multiple=True,
)
THREADS = Option("--threads", "onnxruntime threads; 0 = automatic.", "int", 0, 0, 64, advanced=True)
NO_NORMALIZE = Option(
    "--no-normalize", "Do not rewrite numbers and symbols as words.", "flag", False, advanced=True
)
# The worker's peak memory follows its longest call; the model's context is 510 phonemes.
MAX_CALL_TOKENS = Option(
    "--max-call-tokens",
    "Longest model call in tokens; higher cuts fewer clauses, needs more memory.",
    "int",
    120,
    50,
    500,
    advanced=True,
)
# A call decoded whole holds its activations at once; windows bound the peak.
MAX_DECODE_SECONDS = Option(
    "--max-decode-seconds",
    "Longest speech decoded at once, in seconds (0: calls whole); less memory.",
    "float",
    0.0,
    0.0,
    30.0,
    advanced=True,
)
# The volume multiplier a request, a preset or the server may ask for.
VOLUME_RANGE = (0.0, 4.0)
VOLUME = Option(
    "--volume",
    "Loudness on top of every voice's equal loudness; peaks limited, never clipped.",
    "float",
    1.0,
    *VOLUME_RANGE,
    addon="volume",
)
LEAD_SILENCE = Option(
    "--lead-silence",
    "Milliseconds of silence before each answer (speakers that wake late).",
    "int",
    0,
    0,
    5000,
    addon="lead_silence",
)
TAIL_SILENCE = Option(
    "--tail-silence",
    "Milliseconds of silence after each answer (speakers that cut the end).",
    "int",
    0,
    0,
    5000,
    addon="tail_silence",
)
DOWNLOAD = Option(
    "--download",
    "Fetch the upstream model and 54 voices into the first data dir if missing.",
    "choice",
    choices=tuple(sorted(MODEL_FILES)),
)
DOWNLOAD_URL = Option(
    "--download-url", "Where --download fetches from.", default=DEFAULT_DOWNLOAD_URL, advanced=True
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
URI = Option(
    "--uri", "Where Wyoming listens: tcp://, unix:// or stdio://.", default="tcp://0.0.0.0:10200"
)
ZEROCONF = Option(
    "--zeroconf",
    "Advertise over zeroconf (_wyoming._tcp), optionally under NAME.",
    metavar="[NAME]",
    flag_value="",
)
ZEROCONF_ADDRESS = Option(
    "--zeroconf-address", "Address to advertise (default: the outgoing interface's).", advanced=True
)
ZEROCONF_INTERFACE = Option(
    "--zeroconf-interface", "Interface address for mDNS (repeatable).", multiple=True, advanced=True
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
PRELOAD = Option("--preload", "Start the worker at start-up.", "flag", False, advanced=True)
PREFORK = Option(
    "--prefork",
    "Fork each worker from a waiting parent: faster cold start, more idle memory.",
    "flag",
    False,
    advanced=True,
)
DECODE = Option(
    "--decode",
    "First call of an utterance: in windows (sooner audio) or whole (cut into phrases).",
    "choice",
    "windows",
    choices=("windows", "whole"),
    advanced=True,
)
PHRASE_WAIT = Option(
    "--phrase-wait",
    "Seconds to wait for a streamed first sentence before speaking its opening phrase.",
    "float",
    0.2,
    0.0,
    10.0,
    advanced=True,
)
NO_STREAMING = Option(
    "--no-streaming", "Do not advertise streaming synthesis.", "flag", False, advanced=True
)
NO_TEACHING = Option(
    "--no-teaching",
    "Do not teach the voices in the background; each learns from its own whole calls.",
    "flag",
    False,
    advanced=True,
)
WORD_EVENTS = Option(
    "--word-events",
    "Send each word's time over Wyoming, in events Home Assistant ignores.",
    "flag",
    False,
    advanced=True,
)
MAX_TEXT_CHARS = Option(
    "--max-text-chars", "Longest text accepted.", "int", 100_000, 1, advanced=True
)
MIN_FREE_MB = Option(
    "--min-free-mb",
    "Refuse to start the worker with less available memory.",
    "int",
    400,
    0,
    advanced=True,
)
CONNECTION_TIMEOUT = Option(
    "--connection-timeout",
    "Seconds a connection may send or read nothing before it is closed.",
    "float",
    600.0,
    1,
    advanced=True,
)
MAX_CONNECTIONS = Option(
    "--max-connections",
    "Connections open at once, per protocol; more are refused.",
    "int",
    64,
    1,
    advanced=True,
)
HTTP = Option(
    "--http",
    "Also serve the OpenAI-compatible HTTP API here, e.g. tcp://0.0.0.0:8880.",
    metavar="URI",
)
API_KEY = Option("--api-key", "Bearer token that HTTP requests must send.", addon="api_key")
CORS_ORIGIN = Option(
    "--cors-origin",
    "Browser origin allowed to call the HTTP API (repeatable).",
    multiple=True,
    advanced=True,
)

# In the order --help lists them: what a user sets, then (under --help-all) the rest.
SERVER = (
    URI,
    ZEROCONF,
    VOICE,
    SPEED,
    VOLUME,
    LEAD_SILENCE,
    TAIL_SILENCE,
    DATA_DIR,
    DOWNLOAD,
    IDLE_TIMEOUT,
    HTTP,
    API_KEY,
    DEBUG,
    MODEL,
    VOICES,
    DOWNLOAD_URL,
    PRELOAD,
    PREFORK,
    THREADS,
    MAX_CALL_TOKENS,
    MAX_DECODE_SECONDS,
    DECODE,
    NO_TEACHING,
    PHRASE_WAIT,
    NO_STREAMING,
    WORD_EVENTS,
    NO_NORMALIZE,
    MAX_TEXT_CHARS,
    MIN_FREE_MB,
    CONNECTION_TIMEOUT,
    MAX_CONNECTIONS,
    CORS_ORIGIN,
    ZEROCONF_ADDRESS,
    ZEROCONF_INTERFACE,
)
