"""Whose call the worker speaks next: the clients' queues and the rules of turns.

Every piece of text a client wants spoken is a `Job`. Jobs wait in one queue per
client; before each model call the client served least recently goes, so a short
announcement waits for at most one call of a long article, never for the article.
A client who hears nothing yet does not wait for the call of one who does. A
client that does not read its audio stops being served once a bounded amount of it
waits in the server.

Bookkeeping only, no I/O: the scheduler asks who goes next and tells what happened;
the answers say when the call in flight should stop for someone else.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from wyoming_kokoro.audio import BYTES_PER_SECOND, SENTENCE_PAUSE_MS
from wyoming_kokoro.text.normalizing import Normalization
from wyoming_kokoro.timeline import WordTime

_LOGGER = logging.getLogger(__name__)

_END = object()

# Audio a client may have waiting in the server before its next call waits: 10 s
# of speech (480 kB), far ahead of any listener. A client that stops reading
# cannot make the worker speak a whole book into server memory.
MAX_BUFFERED_BYTES = 10 * 24_000 * 2


class SynthesisError(RuntimeError):
    """A job could not be spoken; the text is meant for the client."""


class PieceFailed(SynthesisError):
    """The worker answered that it could not speak this piece: its text is the
    cause, not the server (HTTP answers 422, which clients do not retry)."""


@dataclass(frozen=True)
class Said:
    """Written words said from the next block of a job's audio on, timed from its start."""

    words: list[WordTime]


@dataclass
class Job:
    """One piece of text for one client; audio arrives on `chunks`."""

    client: int
    text: str
    voice: str
    speed: float
    lang: str | None
    volume: float = 1.0
    awaited: bool = False  # the first piece of an utterance: a listener waits for it
    words: bool = False  # its written words' times are wanted (Said before its audio)
    sentence_pause: int = SENTENCE_PAUSE_MS  # milliseconds after a sentence, at speed 1.0
    normalization: Normalization = field(default_factory=Normalization)  # the request's
    id: int = 0
    chunks: asyncio.Queue[bytes | object | SynthesisError] = field(default_factory=asyncio.Queue)
    cancelled: bool = False
    started: bool = False  # the worker holds its plan
    on_consumed: Callable[[int], None] | None = None
    # Where the piece is (the worker's note in its last answer, and the bytes of the
    # call in progress heard since): a new worker goes on from there if this one dies.
    steps: list[int] = field(default_factory=list)
    heard: int = 0
    skipped: bool = False  # it was in flight when its worker died: its audio ended there

    async def audio(self) -> AsyncIterator[bytes]:
        """PCM blocks of this job until it is done; raises SynthesisError on failure."""
        async for pcm, _ in self.timed():
            yield pcm

    async def timed(self) -> AsyncIterator[tuple[bytes, list[WordTime]]]:
        """`audio`, each block with the words said from its start on (times from it)."""
        words: list[WordTime] = []
        while True:
            item = await self.chunks.get()
            if item is _END:
                return
            if isinstance(item, SynthesisError):
                raise item
            if isinstance(item, Said):
                words = item.words
                continue
            assert isinstance(item, bytes)
            if self.on_consumed is not None:
                self.on_consumed(len(item))
            yield item, words
            words = []


class Turns:
    """The queued jobs of every client, and who has heard audio of their utterance."""

    def __init__(self) -> None:
        self._queues: dict[int, deque[Job]] = {}
        self._served: dict[int, int] = {}  # client → tick of its last call
        self._buffered: dict[int, int] = {}  # client → bytes of audio not yet taken
        self._tick = 0
        self._ids = itertools.count(1)
        self._heard: set[int] = set()  # clients who have audio already
        # client → when its listener's player runs out of the audio sent so far (a
        # player that ran dry waits for the next audio, then plays it through)
        self._playing: dict[int, float] = {}
        self.drops: list[int] = []  # started jobs whose client went away
        self.crowded = False  # another client waits for the model too
        self.in_flight: Job | None = None  # the job whose call the worker is speaking
        self.sharing = False  # the call in flight lets others go after its first window

    @property
    def waiting(self) -> bool:
        """Whether any job is queued (held back by a full buffer or not)."""
        return bool(self._queues)

    @property
    def planned(self) -> bool:
        """Whether the worker holds the plan of a job not yet spoken whole."""
        return any(queue[0].started for queue in self._queues.values() if queue)

    def add(self, job: Job) -> None:
        """Queue `job` (numbered here)."""
        job.id = next(self._ids)
        self._queues.setdefault(job.client, deque()).append(job)
        if job.awaited:
            # A new utterance (a connection may speak several): its listener hears
            # nothing of it yet, whatever an earlier one gave.
            self._heard.discard(job.client)
            self._playing.pop(job.client, None)

    def stops_for(self, newcomer: Job) -> Job | None:
        """The job in flight if it should stop for `newcomer`: a client who hears
        nothing yet does not wait for a call of one who does. The stopped call is
        spoken again after the newcomer's first call."""
        running = self.in_flight
        if running is None or running.client == newcomer.client:
            return None
        if newcomer.client in self._heard or running.client not in self._heard:
            return None
        return running

    def next_job(self, started_only: bool = False) -> Job | None:
        """The job of the client served least recently, among those with room
        (with `started_only`, among the jobs whose plan the worker holds).

        A client that was never served (an announcement arriving while an article
        is read) goes before one that was just served; between newcomers, the one
        with the shortest piece: an announcement arriving with three long answers
        waits for none of them.
        """
        for client in list(self._queues):
            queue = self._queues[client]
            while queue and queue[0].cancelled:
                queue.popleft()
            if not queue:
                del self._queues[client]
        ready = [
            c
            for c in self._queues
            if self._buffered.get(c, 0) < MAX_BUFFERED_BYTES
            and (self._queues[c][0].started or not started_only)
        ]
        if not ready:
            return None
        self.crowded = len(ready) > 1
        client = min(ready, key=lambda c: (self._served.get(c, 0), len(self._queues[c][0].text)))
        self._tick += 1
        self._served[client] = self._tick
        return self._queues[client][0]

    def cancel(self, client: int) -> Job | None:
        """Forget a client's waiting jobs; returns its job in flight, to stop."""
        for job in self._queues.pop(client, ()):
            job.cancelled = True
            if job.started:
                self.drops.append(job.id)
        self._served.pop(client, None)
        self._buffered.pop(client, None)
        self._heard.discard(client)
        self._playing.pop(client, None)
        running = self.in_flight
        return running if running is not None and running.client == client else None

    def consumed(self, client: int, size: int) -> bool:
        """`size` bytes of `client`'s audio were read; True if that gave it room again."""
        if client not in self._buffered:
            return False
        was_full = self._buffered[client] >= MAX_BUFFERED_BYTES
        self._buffered[client] -= size
        return was_full and self._buffered[client] < MAX_BUFFERED_BYTES

    def take(self, job: Job, pcm: bytes) -> bool:
        """Audio for `job`'s listener; True if the call in flight should now let a
        newcomer go first."""
        if not pcm or job.cancelled:
            return False
        first = job.client not in self._heard
        self._heard.add(job.client)
        now = time.monotonic()
        plays_until = max(self._playing.get(job.client, now), now)
        self._playing[job.client] = plays_until + len(pcm) / BYTES_PER_SECOND
        buffered = self._buffered.get(job.client, 0) + len(pcm)
        self._buffered[job.client] = buffered
        job.chunks.put_nowait(pcm)
        if buffered >= MAX_BUFFERED_BYTES:
            _LOGGER.debug("Client %d is not reading its audio: held back", job.client)
        # Newcomers that came together: once this one hears its first window, the
        # next waiting listener's first call goes before the rest of this one
        # (unless the call was told so when it was sent).
        return (
            first and self.in_flight is job and not self.sharing and self.awaiting_audio(job.client)
        )

    def in_hand(self, client: int) -> float | None:
        """Seconds of audio `client`'s listener has yet to hear, playing it from its
        first audio on (after a gap, from where the audio came again); None before the
        first audio of its utterance."""
        plays_until = self._playing.get(client)
        if plays_until is None:
            return None
        return max(0.0, plays_until - time.monotonic())

    def shares_with(self, newcomer: Job) -> Job | None:
        """The job in flight if it should let `newcomer` go after its plan and first
        window (or at once, in a later window), told now: both listeners wait for
        their first audio, and the call was sent before the newcomer came (else it
        knows). Told when its first window arrives instead, the worker would be
        decoding the next one by then."""
        running = self.in_flight
        if running is None or running.cancelled or running.client == newcomer.client:
            return None
        if self.sharing or newcomer.client in self._heard or running.client in self._heard:
            return None
        self.sharing = True
        return running

    def awaiting_audio(self, other_than: int) -> bool:
        """Whether a client other than `other_than` waits for its first audio."""
        return any(
            client != other_than
            and client not in self._heard
            and any(not job.cancelled for job in queue)
            for client, queue in self._queues.items()
        )

    def done(self, job: Job) -> None:
        """`job` was spoken whole."""
        self._finished(job, _END)

    def failed(self, job: Job, error: SynthesisError) -> None:
        self._finished(job, error)

    def _finished(self, job: Job, item: object) -> None:
        job.chunks.put_nowait(item)
        queue = self._queues.get(job.client)
        if queue and queue[0] is job:
            queue.popleft()
            if not queue:
                del self._queues[job.client]

    def fail_all(self, error: SynthesisError) -> None:
        """Every waiting job gets `error` (no worker can start, or the server stops)."""
        for client in list(self._queues):
            for job in self._queues.pop(client):
                job.chunks.put_nowait(error)

    def skip(self, job: Job) -> None:
        """`job` was in flight when its worker died (or hung): its audio ends where it
        is, without an error, and it is never sent again; its client's next piece goes
        on. Whatever killed one worker would kill the next."""
        job.skipped = True
        self._finished(job, _END)

    def new_burst(self) -> None:
        """A new worker: it holds no plan, so every started piece is sent to it again,
        with where it was (`Job.steps`, `Job.heard`), and nothing is left to drop."""
        self.drops.clear()
        for queue in self._queues.values():
            for job in queue:
                job.started = False
