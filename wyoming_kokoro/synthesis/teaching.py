"""The server's voice taught before anyone listens.

A listener's first call is decoded in windows with statistics predicted from the
voice's earlier whole calls (`prior.py`); until the voice has spoken 8 of them, the
windows fall back to probe rows, the farthest from the whole decode (log-mel 1.95 dB
on 24 held-out sentences, against 1.49 dB after 8 calls and 1.14 dB after these 26).
So when the model is cut, the same low-priority process speaks these sentences in
the server's voice, decoded whole, and keeps what they taught with the cut model.
Short replies too: a call's statistics move with its length, and one predicted from
sentences alone was 13 dB from the whole decode of "Hi." (1.7 dB with these). About
16 calls of 4 s of speech and 10 of 1-2 s, once per model and onnxruntime release.
"""

from __future__ import annotations

import logging
import time

from wyoming_kokoro.catalog.voices import g2p_language
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.prior import BANDS, SHORT_FRAMES

_LOGGER = logging.getLogger(__name__)

# Spoken as a home assistant speaks, each one call: sentences (of at least
# prior.SHORT_FRAMES), then short replies (of at least prior.MIN_FRAMES). Never the
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
    """Speak `sentences` and `replies` in `voice`, decoded whole, so its statistics are
    learned and kept; how many calls the voice has taught after. A length the voice
    already holds as many calls of as there are texts for it (adopted from an earlier
    cut) is not taught again, but replies are while it holds none under 70 frames.
    Voices that do not read English are left to learn from their own calls."""
    spec = engine.voice(voice)
    lang = g2p_language(spec, (sentences + replies)[0])
    if not lang.startswith("en"):
        _LOGGER.info("Not teaching %s: it reads %s, these sentences are English", voice, lang)
        return engine.calls_learned(voice)
    held = engine.lengths_learned(voice)
    texts: tuple[str, ...] = ()
    if sum(frames >= SHORT_FRAMES for frames in held) < len(sentences):
        texts += sentences
    # Replies are 54-93 frames. A cache from before calls were kept per band may hold
    # many longer short calls and none as short as "Hi.": it is taught them again.
    short = [frames for frames in held if frames < BANDS[1]]
    if len(short) < len(replies) or min(short, default=BANDS[0]) >= BANDS[0]:
        texts += replies
    if not texts:
        return engine.calls_learned(voice)
    started = time.monotonic()
    for text in texts:
        for call in engine.plan(text, spec, lang=lang):
            engine.run(call)
    engine.keep_learned()
    learned = engine.calls_learned(voice)
    _LOGGER.info(
        "Taught %s in %.0f s: windows use its statistics (%d calls)",
        voice,
        time.monotonic() - started,
        learned,
    )
    return learned
