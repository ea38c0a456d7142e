"""SSML's segments → what an utterance speaks: its pieces, each with its voicing
(voice, speed, reading language, volume, a preset's own pauses), and the silences of
its breaks; and the voicing SSML's styles ask for (`ssml_voicing`).

Planning touches no queue, so it may run in a thread; `utterance.SpokenText`
queues the plan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from wyoming_kokoro.audio import Pauses, silence_bytes
from wyoming_kokoro.catalog.voices import VoiceError, reading_language_of
from wyoming_kokoro.options import SPEED
from wyoming_kokoro.text.pieces import SentenceStream
from wyoming_kokoro.text.ssml import Pause, Segment, Style

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.presets import Choice

# Its lines go out under the utterance's name, as they always did: one name to
# follow a request's lines by.
_LOGGER = logging.getLogger("wyoming_kokoro.server.utterance")

# A preset's own pauses after a sentence and between paragraphs, in milliseconds (None:
# the utterance's).
OwnPauses = tuple[int | None, int | None]
SAME_PAUSES: OwnPauses = (None, None)
# What a job is spoken with: the voice, speed, language, volume and own pauses.
Voicing = tuple[str, float, str | None, float, OwnPauses]
# Text pieces and the voicing they are spoken with, or silence (SSML breaks).
Planned = list[tuple[Voicing, list[str]] | bytes]


def plan_ssml(
    segments: list[Segment],
    voicing: Callable[[Style], Voicing],
    current: Voicing,
    stream: SentenceStream,
    pauses: Pauses,
) -> tuple[Planned, Voicing, SentenceStream]:
    """The pieces of SSML's segments, each with its voicing, and the silences between;
    with the voicing and the sentence stream the text after them goes on with.

    `current` and `stream`: the utterance's so far. A voice change or a break ends the
    text before it, as a sentence end does. A document with nothing to say is no
    speech, its breaks no silence: as empty text.
    """
    planned: Planned = []
    for segment in segments:
        if isinstance(segment, Pause):
            planned.append((current, stream.finish()))
            stream = SentenceStream(current[2] or "en")
            ms = segment.silence_ms(_last_piece(planned), current[1], pauses.over(*current[4]))
            if ms:
                planned.append(silence_bytes(ms))
            continue
        wanted = voicing(segment.style)
        if wanted != current:
            planned.append((current, stream.finish()))
            current, stream = wanted, SentenceStream(wanted[2] or "en")
        planned.append((current, stream.feed(segment.text, more=False)))
    if not any(not isinstance(item, bytes) and item[1] for item in planned):
        planned = []  # only breaks (or symbols): not seconds of silence for nothing
    return planned, current, stream


def ssml_voicing(
    choose: Callable[[str], Choice], base: Choice, volume: float
) -> Callable[[Style], Voicing]:
    """How SSML's styles are spoken: `<voice>` names a voice, blend or preset (`choose`;
    a preset brings its pauses), `<prosody rate>` multiplies its speed, `xml:lang` sets
    the reading language."""

    def voicing(style: Style) -> Voicing:
        # A voice or language SSML names but none has: its text in the request's own
        # (speech is never lost to one attribute), with a warning naming no text.
        try:
            choice = base if style.voice is None else choose(style.voice)
        except VoiceError:
            _LOGGER.warning("SSML <voice name> names no voice: the request's voice speaks")
            choice = base
        try:
            lang = reading_language_of(style.lang) if style.lang else choice.lang
        except VoiceError:
            _LOGGER.warning("SSML xml:lang names no reading language: the voice's own is read")
            lang = choice.lang
        speed = min(max(choice.speed * style.rate, SPEED.low or 0.5), SPEED.high or 2.0)
        loudness = choice.volume * style.volume * volume
        own = SAME_PAUSES if choice is base else (choice.sentence_pause, choice.paragraph_pause)
        return choice.voice, round(speed, 4), lang, loudness, own

    return voicing


def _last_piece(planned: Planned) -> str:
    """The piece said just before the end of `planned` ("" if silence is)."""
    for item in reversed(planned):
        if isinstance(item, bytes):
            return ""
        if item[1]:
            return item[1][-1]
    return ""
