"""Text → the model calls that speak it: normalized, phonemized, cut where calls must be.

Text work only: no model runs here. The engine decodes what this plans.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from functools import partial
from typing import Any

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS
from wyoming_kokoro.catalog.voices import VoiceSpec, g2p_language
from wyoming_kokoro.options import SPEED
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.timing import divide, mark
from wyoming_kokoro.text.g2p import Phonemizer, reading_language
from wyoming_kokoro.text.normalize import normalize
from wyoming_kokoro.text.normalize.passes import switched_off
from wyoming_kokoro.text.normalize.runs import bound_runs
from wyoming_kokoro.text.normalizing import Normalization
from wyoming_kokoro.text.phrases import opening_phrases

_LOGGER = logging.getLogger(__name__)
# A sentence's end in phonemes: its mark, closing quotes or brackets, then a space.
_SENTENCE_END = re.compile(r"([.!?…。！？][\"')\]”’»」』）]*)\s+")


class Planner:
    """Plans a piece of text as model calls for one loaded model's tokenizer."""

    def __init__(
        self,
        settings: EngineSettings,
        tokenizer: Any,
        lexicon: dict[str, str],
        windows: bool,
    ) -> None:
        """`tokenizer`: kokoro-onnx's (its espeak reads what misaki cannot);
        `lexicon`: the user's words and their phonemes; `windows`: the model decodes
        a listener's first call in windows (the cut model is loaded)."""
        self.settings = settings
        self._tokenizer = tokenizer
        self._windows = windows
        self._phonemize = Phonemizer(tokenizer.phonemize, lexicon=lexicon)

    def phonemes(self, text: str, lang: str, normalized: bool = True) -> str:
        """Normalized text → phonemes (what the model will say). Unnormalized text
        (the settings' or, `normalized` False, one request's) still has its runs too
        long to listen to cut (runs.py)."""
        normalizing = self.settings.normalize and normalized
        text = normalize(text, lang) if normalizing else bound_runs(text)
        return self._phonemize(text, lang)

    def _said(self, text: str, lang: str, normalized: bool = True) -> str:
        """`phonemes`, contained: a text exception (a bug) never ends an answer. Should
        the normalized text fail the G2P, the text is read as written; should that fail
        too, this part alone is left unsaid. One warning each time."""
        try:
            return self.phonemes(text, lang, normalized)
        except Exception:
            _LOGGER.warning("Reading a piece in %s failed; read as written", lang, exc_info=True)
        try:
            return self._phonemize(bound_runs(text), lang)
        except Exception:
            _LOGGER.warning("Reading a piece in %s failed again; skipped", lang, exc_info=True)
            return ""

    def _says_anything(self, phonemes: str) -> bool:
        """Whether the model has a token for any of `phonemes` (else: symbols only)."""
        return bool(self._tokenizer.tokenize(phonemes))

    def plan(
        self,
        piece: str,
        voice: VoiceSpec,
        speed: float = 1.0,
        lang: str | None = None,
        awaited: bool = False,
        in_hand: float | None = None,
        words: bool = False,
        sentence_pause: int = SENTENCE_PAUSE_MS,
        normalization: Normalization | None = None,
    ) -> list[Call]:
        """The model calls that speak one piece of text, in order.

        `awaited` (the first piece a listener waits for) has its first call decoded
        in windows; without windows, it gives the opening phrase a call of its own,
        so the first audio comes after a short call, and cuts the rest into phrases
        while it would take longer to say than the audio in hand lasts. `in_hand`
        (a later piece: the seconds of audio its listener has yet to hear) goes with
        its first call, which the engine decodes in windows if a whole call would come
        later than that; such a piece is never cut. `words`: the calls carry the
        piece's written words, for the engine's `timed`. `sentence_pause`: the
        milliseconds after a sentence's end; `normalization`: the request's own.
        """
        how = normalization or Normalization()
        with switched_off(how.off):
            return self._plan(
                piece, voice, speed, lang, awaited, in_hand, words, sentence_pause, how.normalize
            )

    def _plan(
        self,
        piece: str,
        voice: VoiceSpec,
        speed: float,
        lang: str | None,
        awaited: bool,
        in_hand: float | None,
        words: bool,
        sentence_pause: int,
        normalized: bool,
    ) -> list[Call]:
        from kokoro_onnx.chunker import split_phonemes

        SPEED.check(speed)
        # A Japanese or Chinese voice reads a piece without kana or ideographs as English.
        lang = reading_language(piece, lang or g2p_language(voice, piece))
        windowed = awaited and self._windows
        # Without windows, a short first call is bought by cutting the sentence.
        cut = awaited and not windowed and lang.startswith("en")
        calls: list[Call] = []
        for part in opening_phrases(piece) if cut else [piece]:
            said = self._said(part, lang, normalized)
            # Inside a call the model leaves its own short pause after a sentence: a
            # longer one asked for needs the sentence to end its call.
            spans = sentences(said) if sentence_pause > SENTENCE_PAUSE_MS else [said]
            limit = self.settings.max_call_tokens
            for batch in (b for span in spans for b in split_phonemes(span, limit)):
                if self._says_anything(batch):
                    first = not calls
                    hand = in_hand if first else None
                    call = Call(batch, voice, speed, windowed and first, hand)
                    calls.append(replace(call, sentence_pause=sentence_pause))
        if words and calls:
            from wyoming_kokoro.text.words import readings

            try:
                found = readings(
                    piece,
                    lang,
                    partial(self.phonemes, normalized=normalized),
                    self._phonemize,
                    self.settings.normalize and normalized,
                )
            except Exception:  # the words lose their times, the piece is still said
                _LOGGER.warning("Finding the words of a piece failed", exc_info=True)
                found = []
            return mark(calls, found, self._tokenizer.vocab)
        return calls

    def shorten(self, call: Call, limit: int) -> list[Call]:
        """`call` as calls of at most `limit` phonemes, cut between words."""
        from kokoro_onnx.chunker import split_phonemes

        if len(call.phonemes) <= limit:
            return [call]
        parts = split_phonemes(call.phonemes, limit)
        # The first part is decoded next: what its listener has in hand goes with it.
        calls = [
            replace(call, phonemes=part, words=None, in_hand=None if i else call.in_hand)
            for i, part in enumerate(parts)
        ]
        return divide(call, calls, self._tokenizer.vocab)


def sentences(phonemes: str) -> list[str]:
    """`phonemes` cut after each sentence's end."""
    return [part for part in _SENTENCE_END.sub("\\1\n", phonemes).split("\n") if part.strip()]
