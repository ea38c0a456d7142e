"""Each chapter of a long document as steps: its pieces with the voice, speed, volume
and reading language they are said in, and the silences SSML asks for. Plain text is
said in the run's voice; SSML may change voice, rate, volume and language as the
server's SSML does (a name that means nothing here falls back, with a warning)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import click

from wyoming_kokoro.audio import Pauses
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Choice, Preset, choose
from wyoming_kokoro.catalog.voices import VoiceError, g2p_language, parse_voice, reading_language_of

from .book import Book, Chapter
from .plan import Pause, Say, Step

if TYPE_CHECKING:
    from wyoming_kokoro.text.ssml import Style

    from .main import SayConfig

_LOGGER = logging.getLogger("kokoro_say")


class ChapterSteps:
    """Each chapter's steps: its pieces with the voice, speed, volume and reading
    language they are said in (SSML may change them)."""

    def __init__(
        self,
        config: SayConfig,
        assets: Assets,
        presets: dict[str, Preset],
        choice: Choice,
        speed: float,
        book: Book,
    ) -> None:
        from wyoming_kokoro.text.pieces import split_text

        self._split = split_text
        self._assets = assets
        self._presets = presets
        self._choice = choice
        self._speed = speed
        self._asked_volume = config.speech.volume
        self._pauses = config.speech.pauses.over(choice.sentence_pause, choice.paragraph_pause)
        self._spec = parse_voice(choice.voice, assets.voice_names)
        preset_lang = presets[choice.preset].language if choice.preset else None
        self._asked = config.lang or preset_lang or reading(book.language)

    def steps(self, chapter: Chapter) -> list[Step]:
        if chapter.ssml:
            return self._ssml_steps(chapter.text)
        from wyoming_kokoro.text.pieces import PARAGRAPH

        lang = g2p_language(self._spec, chapter.text, self._asked)
        volume = self._choice.volume * self._asked_volume
        steps: list[Step] = []
        for piece in self._split(chapter.text, lang, paragraphs=True):
            if piece != PARAGRAPH:
                sentence = self._pauses.sentence
                steps.append(Say(piece, self._choice.voice, self._speed, volume, lang, sentence))
            elif steps and (ms := self._pauses.after_paragraph(self._speed)):
                steps.append(Pause(ms))
        while steps and isinstance(steps[-1], Pause):
            steps.pop()  # the chapter's end: the pause between chapters follows
        return steps

    def _ssml_steps(self, text: str) -> list[Step]:
        from wyoming_kokoro.text import ssml

        try:
            segments = ssml.parse(text)
        except ssml.SsmlError as err:
            raise click.ClickException(str(err)) from err
        steps: list[Step] = []
        last = ""
        # A break's silence follows the pauses and speed of the text said before it.
        speed, pauses = self._speed, self._pauses
        for segment in segments:
            if isinstance(segment, ssml.Pause):
                ms = segment.silence_ms(last, speed, pauses)
                if ms:
                    steps.append(Pause(ms))
                continue
            voice, speed, volume, lang, pauses = self._styled(segment.style, segment.text)
            for piece in self._split(segment.text, lang):
                steps.append(Say(piece, voice, speed, volume, lang, pauses.sentence))
                last = piece
        return steps

    def _styled(self, style: Style, text: str) -> tuple[str, float, float, str, Pauses]:
        """An SSML style as voice, speed, volume, language and pauses (a preset's own
        where it sets them); what names nothing we have falls back to the run's own,
        with a warning (as the server does)."""
        from wyoming_kokoro.options import SPEED

        choice, speed, pauses = self._choice, self._speed, self._pauses
        if style.voice is not None:
            try:
                choice = choose(style.voice, self._assets.voice_names, self._presets, speed)
                speed = choice.speed  # a preset's own, else the run's
                pauses = self._pauses.over(choice.sentence_pause, choice.paragraph_pause)
            except VoiceError:
                _LOGGER.warning("SSML <voice name> names no voice: the run's voice speaks")
        speed = min(max(speed * style.rate, SPEED.low or 0.5), SPEED.high or 2.0)
        asked = reading(style.lang) or self._asked
        spec = parse_voice(choice.voice, self._assets.voice_names)
        lang = g2p_language(spec, text, asked)
        volume = choice.volume * style.volume * self._asked_volume
        return choice.voice, round(speed, 4), volume, lang, pauses


def reading(code: str | None) -> str | None:
    if not code:
        return None
    try:
        return reading_language_of(code)
    except VoiceError:
        return None
