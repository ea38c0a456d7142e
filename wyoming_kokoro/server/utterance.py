"""Text of one utterance → scheduler jobs → its audio in order, for any transport.

The Wyoming handler and the HTTP API both speak text that may arrive in pieces:
each complete sentence (or clause) becomes a `Job` at once, so the first audio
comes while later text is still on its way, and the audio of the jobs is read
back in the order of the text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable

from wyoming_kokoro.audio import BYTES_PER_SECOND, Pauses, silence_bytes
from wyoming_kokoro.options import PHRASE_WAIT
from wyoming_kokoro.server.scheduler import Scheduler
from wyoming_kokoro.server.ssml_plan import SAME_PAUSES, Planned, Voicing, plan_ssml
from wyoming_kokoro.server.turns import Job
from wyoming_kokoro.text.normalizing import Normalization
from wyoming_kokoro.text.pieces import PARAGRAPH, SentenceStream
from wyoming_kokoro.text.ssml import Segment, Style
from wyoming_kokoro.timeline import Timeline, WordTime

_LOGGER = logging.getLogger(__name__)
# The text a request's DEBUG line shows, at most (its INFO line shows none).
LOGGED_CHARS = 300

# While an LLM writes its first sentence, the sentence's opening phrase goes ahead on
# its own only if the sentence is not complete this long after its first text came.
# A cut costs the sentence its prosody, and its later phrases, whole calls, left up to
# 0.2 s of silence inside it; so a fast writer's sentence (600 characters a second) is
# waited for and said whole, 0.1 s later. A writer slower than about 150 characters a
# second has its opening phrase ready after this anyway: it goes without waiting.
HEAD_WAIT_S = PHRASE_WAIT.default


# Splitting text this long takes milliseconds of the event loop (bench/text_loop.py):
# longer texts are split in a thread.
THREAD_CHARS = 2_000


class TextTooLong(ValueError):
    """More text than the server accepts for one utterance."""


class SpokenText:
    """Feed text with `add_text`, close with `finish`, read PCM from `audio`."""

    def __init__(
        self,
        scheduler: Scheduler,
        client_id: int,
        voice: str,
        speed: float,
        lang: str | None,
        max_chars: int,
        *,
        volume: float = 1.0,
        lead_ms: int = 0,
        tail_ms: int = 0,
        head_wait: float = HEAD_WAIT_S,
        words: bool = False,
        pauses: Pauses | None = None,
        normalization: Normalization | None = None,
    ) -> None:
        """`head_wait`: see `HEAD_WAIT_S` (0: the opening phrase goes as soon as it can);
        `words`: the written words are timed (`timed_audio`); `pauses`: after a
        sentence and between paragraphs; `normalization`: the request's own."""
        self._words = words
        self._pauses = pauses or Pauses()
        self._own_pauses = SAME_PAUSES  # an SSML <voice> preset's, for the text after it
        self._normalization = normalization or Normalization()
        self._paragraph_ended = False  # its pause is due before the next piece
        self._scheduler = scheduler
        self._client = client_id
        self._voice = voice
        self._volume = volume
        self._speed = speed
        self._lang = lang
        self._max_chars = max_chars
        self._lead = silence_bytes(lead_ms)
        self._tail = silence_bytes(tail_ms)
        self._stream = SentenceStream(lang or "en", paragraphs=True)
        # Jobs in the order of the text; bytes are silence said between them (SSML breaks).
        self._jobs: asyncio.Queue[Job | bytes | None] = asyncio.Queue()
        self._chars = 0
        self._asked = voice  # the request's voice (SSML may change the pieces')
        # The text, kept only for the DEBUG log line: INFO never shows what was said.
        self._said: list[str] | None = [] if _LOGGER.isEnabledFor(logging.DEBUG) else None
        self.pieces = 0  # jobs submitted so far
        # Pieces whose audio ended early, without an error: their worker died or hung
        # speaking them (turns.Turns.skip). The rest of the utterance went on.
        self.skipped = 0
        self._head_wait = head_wait
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_due = head_wait <= 0  # the opening phrase may go ahead alone
        self._feeding = False  # the stream is being fed in a thread
        self._closed = False

    def add_text(self, text: str, more: bool = True) -> None:
        """Queue every piece the text completes; raises TextTooLong past the limit.

        `more`: text may follow (a stream); a text given whole is spoken in whole
        sentences (see `SentenceStream.feed`)."""
        self._count(text)
        self._submit(self._stream.feed(text, more=more, head=self._head_due))
        self._await_head(more)

    async def add_text_async(self, text: str, more: bool = True) -> None:
        """`add_text`, with a long text split in a thread: other clients are answered
        meanwhile (Home Assistant gives `describe` one second)."""
        self._count(text)
        head = self._head_due
        if len(text) < THREAD_CHARS:
            pieces = self._stream.feed(text, more=more, head=head)
        else:
            self._feeding = True
            try:
                pieces = await asyncio.to_thread(
                    lambda: self._stream.feed(text, more=more, head=head)
                )
            finally:
                self._feeding = False
        self._submit(pieces)
        self._await_head(more)

    def _await_head(self, more: bool) -> None:
        """Nothing to say yet while text is on its way: the opening phrase goes ahead
        alone once `head_wait` has passed since the first text (see `HEAD_WAIT_S`)."""
        if not more or self.pieces or self._head_due or self._head_timer is not None:
            return
        loop = asyncio.get_running_loop()
        self._head_timer = loop.call_later(self._head_wait, self._head_now)

    def _head_now(self) -> None:
        self._head_due = True
        if not self.pieces and not self._feeding and not self._closed:
            self._submit(self._stream.head())

    def close(self) -> None:
        """Nothing more will be said (the client went away): no timer submits later."""
        self._closed = True
        self._stop_waiting_for_head()

    def _stop_waiting_for_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()

    def _count(self, text: str) -> None:
        self._chars += len(text)
        if self._said is not None and sum(map(len, self._said)) <= LOGGED_CHARS:
            self._said.append(text)
        if self._chars > self._max_chars:
            raise TextTooLong(f"text is longer than the limit of {self._max_chars} characters")

    def finish(self) -> None:
        """All text is in: queue what is left; `audio` ends after it."""
        self._stop_waiting_for_head()
        self._submit(self._stream.finish())
        self._jobs.put_nowait(None)

    def log_spoken(self, door: str, detail: str = "") -> None:
        """The request's one INFO line, alike at both doors: how much, in which voice,
        never what (the text is at DEBUG only)."""
        pieces = f"{self.pieces} piece{'' if self.pieces == 1 else 's'}"
        lost = f", {self.skipped} lost to a failed worker" if self.skipped else ""
        _LOGGER.info(
            "%s client %d: %d characters, %s, voice %s%s%s",
            door,
            self._client,
            self._chars,
            pieces,
            self._asked,
            detail,
            lost,
        )
        if self._said is not None:
            text = "".join(self._said)
            cut = "…" if len(text) > LOGGED_CHARS else ""
            _LOGGER.debug("%s client %d said: %r%s", door, self._client, text[:LOGGED_CHARS], cut)

    def plan_text(self, text: str) -> Planned:
        """Plain text's pieces, planned like `plan_ssml` (may run in a thread)."""
        return [(self._voicing(), self._stream.feed(text, more=False))]

    def count(self, text: str) -> None:
        """Count text towards the limit (TextTooLong past it) without speaking it."""
        self._count(text)

    def plan_ssml(self, segments: list[Segment], voicing: Callable[[Style], Voicing]) -> Planned:
        """The pieces of SSML's segments, each with its voicing, and the silences between
        (`ssml_plan.plan_ssml`); the text after them goes on in the voicing they end in.

        Touches no queue (it may run in a thread); `submit` queues the plan."""
        planned, current, self._stream = plan_ssml(
            segments, voicing, self._voicing(), self._stream, self._pauses
        )
        self._voice, self._speed, self._lang, self._volume, self._own_pauses = current
        return planned

    def _voicing(self) -> Voicing:
        return (self._voice, self._speed, self._lang, self._volume, self._own_pauses)

    def submit(self, planned: Planned) -> None:
        """Queue what `plan_ssml` planned, in its order."""
        for item in planned:
            if isinstance(item, bytes):
                self._jobs.put_nowait(item)
            else:
                self._submit(item[1], item[0])

    def _submit(self, pieces: list[str], voicing: Voicing | None = None) -> None:
        voice, speed, lang, volume, own = voicing or self._voicing()
        pauses = self._pauses.over(*own)
        for piece in pieces:
            if piece == PARAGRAPH:  # its pause goes before the next piece, if one comes
                self._paragraph_ended = True
                continue
            if self._paragraph_ended and (ms := pauses.after_paragraph(speed)):
                self._jobs.put_nowait(silence_bytes(ms))
            self._paragraph_ended = False
            job = Job(self._client, piece, voice, speed, lang, volume)
            job.sentence_pause = pauses.sentence
            job.normalization = self._normalization
            job.awaited = self.pieces == 0  # someone waits for this one: it goes first
            job.words = self._words
            self.pieces += 1
            self._jobs.put_nowait(self._scheduler.submit(job))

    async def audio(self) -> AsyncGenerator[bytes, None]:
        """PCM blocks of every piece, in the order of the text; raises SynthesisError.

        The lead silence goes out with the first block (so a speaker that wakes on
        sound hears it first), the tail silence after the last.
        """
        async for pcm, _ in self.timed_audio():
            if pcm:
                yield pcm

    async def timed_audio(self) -> AsyncGenerator[tuple[bytes, list[WordTime]], None]:
        """`audio`, each block with the written words said from its start on, timed
        in the utterance's time line (seconds from its first sample; with `words`)."""
        lead, line, at = self._lead, Timeline(), 0
        while (item := await self._jobs.get()) is not None:
            if isinstance(item, bytes):
                yield lead + item, []
                at, lead = at + len(lead) + len(item), b""
                continue
            async for pcm, said in item.timed():
                placed = line.add(said, (at + len(lead)) / BYTES_PER_SECOND)
                yield lead + pcm, placed
                at, lead = at + len(lead) + len(pcm), b""
            if left := line.close():  # a word its piece's last call did not end
                yield b"", left
            self.skipped += item.skipped
        if self._tail:
            yield self._tail, []
