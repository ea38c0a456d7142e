"""One utterance on the wire: audio-start, the audio of its text in order, audio-stop.

An *utterance* is what the client hears between one audio-start and its audio-stop:
the text of one `synthesize`, or of a whole streaming session (synthesize-start,
chunks, synthesize-stop).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.tts import SynthesizeVoice

from wyoming_kokoro.audio import BYTES_PER_SECOND, CHANNELS, SAMPLE_RATE, SAMPLE_WIDTH
from wyoming_kokoro.server.ssml_plan import ssml_voicing
from wyoming_kokoro.server.utterance import SpokenText, TextTooLong
from wyoming_kokoro.server.wyoming.wire import ProtocolError
from wyoming_kokoro.text.ssml import SsmlError, is_ssml
from wyoming_kokoro.text.ssml import parse as parse_ssml
from wyoming_kokoro.timeline import WordTime

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from wyoming.event import Event

    from wyoming_kokoro.server.scheduler import Scheduler
    from wyoming_kokoro.server.wyoming.config import HandlerConfig

_CHUNK_BYTES = 8192 * SAMPLE_WIDTH
WORD_EVENT = "kokoro-words"  # --word-events


class Utterance:
    """Text in, ordered audio out, for one audio-start … audio-stop."""

    def __init__(
        self,
        config: HandlerConfig,
        scheduler: Scheduler,
        client_id: int,
        write: Callable[[Event], Awaitable[None]],
        voice: SynthesizeVoice | None,
        ssml: bool | None = None,
    ) -> None:
        """`write`: sends one event to the client (the connection keeps events whole)."""
        self._config = config
        self._write = write
        choice = config.choose(voice)
        self._choice = choice
        # SSML: asked for with text_format, or text that opens with "<" (decided once
        # all of it is in: SSML is spoken when complete, a document is parsed whole).
        self._ssml = ssml
        self._asked_ssml = ssml is True
        self._held: list[str] = []
        self.voice = choice.voice
        self.lang: str | None = choice.lang
        self._text = SpokenText(
            scheduler,
            client_id,
            self.voice,
            choice.speed,
            self.lang,
            config.max_text_chars,
            volume=choice.volume * config.volume,
            # A preset's own silence before and after, else the server's.
            lead_ms=config.lead_ms if choice.lead_silence is None else choice.lead_silence,
            tail_ms=config.tail_ms if choice.tail_silence is None else choice.tail_silence,
            head_wait=config.phrase_wait,
            words=config.word_events,
            pauses=config.pauses.over(choice.sentence_pause, choice.paragraph_pause),
        )
        self.sender: asyncio.Task[None] | None = None

    async def begin(self) -> None:
        """audio-start now (so it precedes any later answer), then audio as it comes."""
        await self._write(AudioStart(SAMPLE_RATE, SAMPLE_WIDTH, CHANNELS).event())
        self.sender = asyncio.create_task(self._send_audio(), name="kokoro sender")

    async def add_text(self, text: str, more: bool = True) -> None:
        """Speak `text` as it comes; `more`: text may follow (see `SpokenText.add_text`)."""
        try:
            if self._ssml is None:
                head = ("".join(self._held) + text).lstrip()
                if head:  # decided by the first character that is not a space
                    self._ssml = head.startswith("<")
                    if not self._ssml:
                        self._held = []
            if self._ssml is not False:
                self._text.count(text)
                self._held.append(text)
                return
            await self._text.add_text_async(text, more)
        except TextTooLong as err:
            raise ProtocolError(str(err)) from None

    def close(self) -> None:
        """The connection ends: nothing of this utterance is queued any more."""
        self._text.close()

    async def _speak_held(self) -> None:
        """The held text: an SSML document, or plain text that merely began with "<"."""
        text, self._held = "".join(self._held), []
        if not text:
            return
        if not is_ssml(text):
            if self._ssml is True and self._asked_ssml:
                # Speech is never lost to a wrong label: read as the plain text it is.
                log.warning("text_format is ssml, but the text is not a <speak> document")
            pieces = await asyncio.to_thread(self._text.plan_text, text)
            self._text.submit(pieces)
            return
        config = self._config
        voicing = ssml_voicing(lambda name: config.choose_strict(name), self._choice, config.volume)
        try:
            planned = await asyncio.to_thread(
                lambda: self._text.plan_ssml(parse_ssml(text), voicing)
            )
        except SsmlError as err:
            raise ProtocolError(str(err)) from None
        self._text.submit(planned)

    async def finish(self) -> None:
        """All text is in: wait until its audio has been sent, with audio-stop."""
        await self._speak_held()
        self._text.finish()
        assert self.sender is not None
        await self.sender
        self._text.log_spoken("Wyoming")

    async def _send_audio(self) -> None:
        write = self._write
        sent = 0  # bytes of audio before this block
        # Words not yet sent: a block may carry words that begin in a later one (the
        # first window of a call brings all but the call's last word).
        pending: list[WordTime] = []
        async for pcm, words in self._text.timed_audio():
            pending += words
            for start in range(0, len(pcm), _CHUNK_BYTES):
                chunk = pcm[start : start + _CHUNK_BYTES]
                # Each word just before the chunk it begins in (--word-events).
                end = (sent + start + len(chunk)) / BYTES_PER_SECOND
                due = 0
                while due < len(pending) and (pending[due].start or 0.0) < end:
                    due += 1
                now, pending = pending[:due], pending[due:]
                if now:
                    await write(word_event(now))
                await write(AudioChunk(SAMPLE_RATE, SAMPLE_WIDTH, CHANNELS, chunk).event())
            sent += len(pcm)
        if pending:  # words the audio ended before (timed past it: never, but kept)
            await write(word_event(pending))
        await write(AudioStop().event())


def word_event(words: list[WordTime]) -> Event:
    """Words and their times (seconds from the utterance's first audio sample), as an
    event of this server's own that Home Assistant, like any Wyoming client that does
    not know it, passes over."""
    from wyoming.event import Event

    timestamps = [{"word": w.word, "start_time": w.start, "end_time": w.end} for w in words]
    return Event(WORD_EVENT, {"timestamps": timestamps})
