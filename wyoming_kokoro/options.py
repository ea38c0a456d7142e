"""Every option of `wyoming-kokoro` and `kokoro-say`, defined once.

Each option's flag, type, range, default, help and environment variable live in
this table (each an `Option`, flags.py); both commands build their click options
from it, `Settings` takes its defaults from it, the engine checks ranges against it,
and tests hold docs/options.md and the add-on's config.yaml and translations to it.
An `advanced` option (tuning and limits) works as any other but is listed only by
`--help-all`.
"""

from __future__ import annotations

from wyoming_kokoro.audio import LONGEST_PAUSE_MS, SENTENCE_PAUSE_MS
from wyoming_kokoro.catalog.files import DEFAULT_DOWNLOAD_URL, MODEL_FILES
from wyoming_kokoro.flags import Option

# ---------------------------------------------------------------- shared by both commands
# One line of help each; docs/options.md says the rest (a test holds it to this table).
VOICE = Option(
    "--voice",
    "Voice, blend (af_bella(2)+af_sky(1)) or preset; default: af_heart, else jm_kumo.",
    addon="voice",
)
SPEED = Option(
    "--speed", "Speaking rate; 1.0 is the voice's own.", "float", 1.0, 0.5, 2.0, addon="speed"
)
MODEL = Option("--model", "Model .onnx file (wins over the data dirs).", "path", advanced=True)
VOICES = Option(
    "--voices", "Voices .bin/.npz file (wins over the data dirs).", "path", advanced=True
)
DATA_DIR = Option(
    "--data-dir",
    "Folder of model, voices, presets and lexicon (repeatable; downloads go to the first); "
    "default: ~/.local/share/wyoming-kokoro.",
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
SENTENCE_PAUSE = Option(
    "--sentence-pause",
    "Milliseconds of silence after a sentence, at speed 1.0.",
    "int",
    SENTENCE_PAUSE_MS,
    0,
    LONGEST_PAUSE_MS,
    addon="sentence_pause",
    advanced=True,
)
# A blank line's: by default a paragraph ends as a sentence does (see audio.Pauses).
PARAGRAPH_PAUSE = Option(
    "--paragraph-pause",
    "Milliseconds of silence between paragraphs (at least the sentence pause).",
    "int",
    SENTENCE_PAUSE_MS,
    0,
    LONGEST_PAUSE_MS,
    addon="paragraph_pause",
    advanced=True,
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
    SENTENCE_PAUSE,
    PARAGRAPH_PAUSE,
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
    "Connections open at once, per protocol; the oldest idle one makes room.",
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
# Home Assistant's ingress: the Supervisor proxies the app's page from this one address.
INGRESS = Option(
    "--ingress",
    "Also serve the page and the API for Home Assistant's ingress here (no API key).",
    metavar="URI",
    advanced=True,
)
INGRESS_PEER = Option(
    "--ingress-peer",
    "The one address --ingress answers (the Supervisor's).",
    default="172.30.32.2",
    metavar="ADDRESS",
    advanced=True,
)
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
    SENTENCE_PAUSE,
    PARAGRAPH_PAUSE,
    MAX_TEXT_CHARS,
    MIN_FREE_MB,
    CONNECTION_TIMEOUT,
    MAX_CONNECTIONS,
    CORS_ORIGIN,
    INGRESS,
    INGRESS_PEER,
    ZEROCONF_ADDRESS,
    ZEROCONF_INTERFACE,
)
