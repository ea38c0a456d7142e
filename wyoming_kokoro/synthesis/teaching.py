"""Every voice taught before anyone listens.

A listener's first call is decoded in windows with statistics predicted from the
voice's earlier whole calls (`prior.py`). So the voice speaks these sentences and
short replies, decoded whole, and keeps what they taught with the cut model; then
its statistics are frozen, and the same request sounds the same every time. Short
replies too: a call's statistics move with its length, and one predicted from
sentences alone was far from the whole decode of "Hi.". The texts are English for
every voice: a voice's statistics follow its style far more than its language
(bench/RESULTS.md, scenario V).

The process that cuts the model teaches the server's voice; then this module, run
as its own process (`python -m wyoming_kokoro.synthesis.teaching`) by the server
only when the CPU would otherwise idle, teaches the others: first the voices a
worker was asked for before they were taught (blends and presets too), then every
installed one. Each text's call is kept as soon as it is learned, so a teacher
stopped halfway goes on where it stopped. A voice not taught yet speaks a
listener's first call whole (`engine.py`).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import signal
import time
from pathlib import Path

from wyoming_kokoro.catalog.voices import VoiceError, g2p_language
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.held_calls import BANDS, SHORT_FRAMES

_LOGGER = logging.getLogger(__name__)

# Spoken as a home assistant speaks, each one call: sentences (of at least
# held_calls.SHORT_FRAMES), then short replies (of at least prior.MIN_FRAMES). Never the
# benchmark's or tests' sentences.
SENTENCES = (
    "The front door has been unlocked, and the hallway light will stay on for five minutes.",
    "It is currently eighteen degrees outside, with light rain expected after three o'clock.",
    "I have added milk, eggs and a loaf of bread to your shopping list for tomorrow.",
    "Your package was delivered to the porch at a quarter past eleven this morning.",
    "The living room is warmer than the bedroom, so I turned the radiator down a little.",
    "Good evening! The garden sprinklers will run for twenty minutes starting at nine.",
    "The battery of the kitchen smoke detector is low and should be replaced this week.",
    "Traffic on your usual route is heavy, so you should leave about ten minutes early.",
    "The washing machine finished its cycle, and the clothes are ready to be hung up.",
    "Tomorrow starts with fog in the valley, clearing to a sunny and mild afternoon.",
    "The motion sensor in the garage noticed movement while everyone was away.",
    "I set the alarm for half past six and turned off every light downstairs.",
    "Your meeting with the dentist was moved from Thursday to Friday at two.",
    "The air quality in the office is poor; opening a window would help.",
    "All windows are closed, the back door is locked, and the security system is armed.",
    "The oven has reached two hundred degrees, so you can put the bread in now.",
)
REPLIES = (
    "Okay.",
    "Sure, done.",
    "The hall lights are off now.",
    "Good morning, it's sunny.",
    "It's raining.",
    "The garage is closed.",
    "Timer set for ten minutes.",
    "Welcome home.",
    "Alarm armed.",
    "The kettle is on.",
)
TEXTS = SENTENCES + REPLIES


def teach(
    engine: Engine,
    voice: str,
    sentences: tuple[str, ...] = SENTENCES,
    replies: tuple[str, ...] = REPLIES,
) -> int:
    """Speak those of `sentences` and `replies` in `voice` it has not learned yet,
    decoded whole, so its statistics are learned and kept, then freeze them; how
    many calls the voice has taught after. A length the voice already holds calls
    of (an earlier, stopped teacher's, or adopted from an earlier cut) is taught
    only the texts it lacks, but replies all again while it holds none under 70
    frames. A taught voice is not taught again."""
    priors = engine.priors
    if priors is None or priors.taught(str(engine.voice(voice))):
        return engine.calls_learned(voice)
    spec = engine.voice(voice)
    lang = g2p_language(spec, (sentences + replies)[0])
    if not lang.startswith("en"):
        lang = "en-us"  # read as English: see above
    held = engine.lengths_learned(voice)
    texts = sentences[sum(frames >= SHORT_FRAMES for frames in held) :]
    # Replies are 54-93 frames. A cache from before calls were kept per band may hold
    # many longer short calls and none as short as "Hi.": it is taught them again.
    short = [frames for frames in held if frames < BANDS[1]]
    texts += replies if min(short, default=BANDS[0]) >= BANDS[0] else replies[len(short) :]
    started = time.monotonic()
    for text in texts:
        for call in engine.plan(text, spec, lang=lang):
            engine.run(call)
        priors.flush()  # kept at once: a teacher stopped now goes on from here
    priors.mark_taught(str(spec))
    learned = engine.calls_learned(voice)
    _LOGGER.info(
        "Taught %s in %.0f s: windows use its statistics (%d calls)",
        voice,
        time.monotonic() - started,
        learned,
    )
    return learned


def teach_all(engine: Engine, first: str | None = None) -> list[str]:
    """Teach every voice that is not taught yet: the wanted ones (asked for before
    they were taught) first, then `first`, then every installed one; the voices
    taught. A wanted voice that cannot be spoken any more is forgotten."""
    priors = engine.priors
    if priors is None:
        return []
    taught: list[str] = []
    tried: set[str] = set()
    seen: list[str] = []
    begun = total = 0  # voices to teach, for the log: counted again when one is wanted anew
    while True:
        queue = [*priors.wanted(), *([first] if first else []), *engine.voice_names]
        voice = next((v for v in queue if v not in tried), None)
        if voice is None:
            return taught
        if queue != seen:
            seen = queue
            total = begun + _untaught(engine, [v for v in queue if v not in tried])
        tried.add(voice)
        try:
            name = str(engine.voice(voice))
        except VoiceError as err:
            _LOGGER.info("Not teaching %s: %s", voice, err)
            priors.forget_wanted(voice)
            continue
        if priors.taught(name):
            priors.forget_wanted(voice)
            continue
        # Minutes of CPU in all: the log says how far it is.
        begun += 1
        _LOGGER.info("Teaching voice %s (%d of %d)", name, begun, max(total, begun))
        try:
            teach(engine, name)
        except Exception as err:  # one voice's trouble must not stop the others
            _LOGGER.warning("Could not teach %s: %s", voice, err)
        else:
            taught.append(name)
        priors.forget_wanted(voice)


def _untaught(engine: Engine, voices: list[str]) -> int:
    """How many of `voices` (each once) can be spoken and are not taught yet."""
    priors, names = engine.priors, set()
    for voice in voices:
        try:
            names.add(str(engine.voice(voice)))
        except VoiceError:
            continue
    return sum(priors is not None and not priors.taught(name) for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path, nargs="?", help="default: the embedded model")
    parser.add_argument("voices", type=Path, nargs="?")
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--first", metavar="VOICE", help="the voice to teach first")
    # One thread beside a server: it runs when the CPU would idle, and a lone thread
    # holds the least memory. More where nothing else runs (an image's build).
    parser.add_argument("--threads", type=int, default=1, help="default: 1")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s teaching: %(message)s")
    _own_process()
    from wyoming_kokoro.catalog.assets import Assets, resolve
    from wyoming_kokoro.catalog.cut import locked, ready
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.loading import ModelLoading

    if args.model is None:
        assets = resolve(None, None, [])
    else:
        assets = Assets(args.model, args.voices, (), "", args.embedded)
    cut = ready(assets.model)
    if cut is None:
        return
    # One teacher per cache: another server's waits, then teaches only what is left.
    with locked(cut, "teach"):
        loading = ModelLoading(assets, args.threads, cut=cut)
        engine = Engine(assets, EngineSettings(threads=args.threads), loading=loading)
        started = time.monotonic()
        taught = teach_all(engine, args.first)
    if taught:
        _LOGGER.info("Taught %d voices in %.0f s", len(taught), time.monotonic() - started)


def _own_process() -> None:
    """End with the server that started it; keep temporary files to itself."""
    from wyoming_kokoro.lifeline import die_with_parent, parent_from_env
    from wyoming_kokoro.worker.scratch import own_tempdir

    server = parent_from_env()
    if server is not None:  # not when run by hand
        die_with_parent(server, signal.SIGKILL)  # every call is kept whole as it ends
    scratch = own_tempdir()
    if scratch is not None:
        atexit.register(scratch.discard)


if __name__ == "__main__":
    main()
