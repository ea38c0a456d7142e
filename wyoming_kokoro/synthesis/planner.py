"""Text → the model calls that speak it: normalized, phonemized, cut where calls must be.

Text work only: no model runs here. The engine decodes what this plans.
"""

from __future__ import annotations

import logging
from typing import Any

from wyoming_kokoro.catalog.voices import VoiceSpec, g2p_language
from wyoming_kokoro.options import SPEED
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.timing import divide, mark
from wyoming_kokoro.text.g2p import Phonemizer, reading_language
from wyoming_kokoro.text.normalize import normalize
from wyoming_kokoro.text.normalize.runs import bound_runs
from wyoming_kokoro.text.phrases import opening_phrases

_LOGGER = logging.getLogger(__name__)


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

    def phonemes(self, text: str, lang: str) -> str:
        """Normalized text → phonemes (what the model will say). Unnormalized text
        still has its runs too long to listen to cut (runs.py)."""
        text = normalize(text, lang) if self.settings.normalize else bound_runs(text)
        return self._phonemize(text, lang)

    def _said(self, text: str, lang: str) -> str:
        """`phonemes`, contained: a text exception (a bug) never ends an answer. Should
        the normalized text fail the G2P, the text is read as written; should that fail
        too, this part alone is left unsaid. One warning each time."""
        try:
            return self.phonemes(text, lang)
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
    ) -> list[Call]:
        """The model calls that speak one piece of text, in order.

        `awaited` (the first piece a listener waits for) has its first call decoded
        in windows; without windows, it gives the opening phrase a call of its own,
        so the first audio comes after a short call, and cuts the rest into phrases
        while it would take longer to say than the audio in hand lasts. `in_hand`
        (a later piece: the seconds of audio its listener has yet to hear) goes with
        its first call, which the engine decodes in windows if a whole call would come
        later than that; such a piece is never cut. `words`: the calls carry the
        piece's written words, for the engine's `timed`.
        """
        from kokoro_onnx.chunker import split_phonemes

        SPEED.check(speed)
        # A Japanese or Chinese voice reads a piece without kana or ideographs as English.
        lang = reading_language(piece, lang or g2p_language(voice, piece))
        windowed = awaited and self._windows
        # Without windows, a short first call is bought by cutting the sentence.
        cut = awaited and not windowed and lang.startswith("en")
        calls: list[Call] = []
        for part in opening_phrases(piece) if cut else [piece]:
            for batch in split_phonemes(self._said(part, lang), self.settings.max_call_tokens):
                if self._says_anything(batch):
                    first = not calls
                    call = Call(batch, voice, speed, windowed and first, in_hand if first else None)
                    calls.append(call)
        if words and calls:
            from wyoming_kokoro.text.words import readings

            try:
                found = readings(
                    piece, lang, self.phonemes, self._phonemize, self.settings.normalize
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
            Call(part, call.voice, call.speed, call.windowed, None if i else call.in_hand)
            for i, part in enumerate(parts)
        ]
        return divide(call, calls, self._tokenizer.vocab)
