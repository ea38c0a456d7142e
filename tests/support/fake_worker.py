"""An in-memory worker for scheduling and protocol tests: no model, no process, no clock.

It speaks the worker protocol as `worker/loop.py` does, plugged into the scheduler through
the same `WorkerHandle` seam as the spawned and forked workers. Each sentence of a
piece is one model call; its "audio" is the sentence's own UTF-8 bytes, cut into
`windows` parts, so a test reads back exactly what was said, in which order, and sees
any word lost or doubled. A test decides when calls finish (`hold` / `release`), when
the worker dies (`die`, or `crash_on` a piece, as the worker's test-only crash hook
does) and whether it starts (`refuse_start`). Its answers carry the piece's steps and
heard bytes as the real worker's do, and a resumed piece goes on from them. Only for
scheduling: what the model makes of text is the real-model tests' job.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import replace

from wyoming_kokoro.protocol import (
    Audio,
    Drop,
    Message,
    Next,
    Piece,
    Preempt,
    Ready,
    Setup,
    Stop,
)
from wyoming_kokoro.server.worker_handle import WorkerStartError


def said(text: str, pad: int = 0) -> list[bytes]:
    """The calls a piece is spoken in: one per sentence, each its text as bytes
    (padded with spaces to `pad` bytes: as much "audio" as a real call's, read back
    the same)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    return [_even(s.encode().ljust(pad)) for s in sentences]


def _even(data: bytes) -> bytes:
    data += b" "  # calls read back apart, as pauses keep sentences apart
    return data + b" " if len(data) % 2 else data  # 16-bit samples come in pairs


def heard(pcm: bytes) -> str:
    """What a listener heard from the fake: the sentences, read back."""
    return " ".join(pcm.decode().split())


class FakeWorker:
    """A `WorkerHandle` whose worker lives in this event loop."""

    def __init__(self, windows: int = 1, pad: int = 0) -> None:
        self.windows = windows  # parts each call's audio comes in (window messages + answer)
        self.pad = pad  # bytes of "audio" a call makes at least (see `said`)
        self.sent: list[Message] = []  # everything the scheduler sent, in order
        self.setups: list[Setup] = []
        self.stops = 0
        self.kills = 0
        self.prepared = 0
        self._crash_marker: str | None = None
        self._steps: dict[int, list[int]] = {}  # piece → calls ended (-1 each)
        self._heard: dict[int, int] = {}  # piece → bytes of its call in progress sent
        self._pid: int | None = None
        self._replies: asyncio.Queue[Message | None] = asyncio.Queue()
        self._plans: dict[int, deque[deque[bytes]]] = {}  # piece → calls → windows left
        self._call: asyncio.Task[None] | None = None
        self._running: int | None = None
        self._preempted: set[int] = set()
        self._soft: set[int] = set()  # to let others go after their next window
        self._held = False
        self._changed = asyncio.Event()  # released or preempted: a waiting call looks again
        self._refusal: str | None = None

    # -- what a test controls -----------------------------------------------

    def hold(self) -> None:
        """Calls (and windows) from now on wait for `release` (a Preempt ends the wait)."""
        self._held = True

    def release(self) -> None:
        self._held = False
        self._changed.set()

    def refuse_start(self, reason: str | None) -> None:
        """The next starts fail with `reason` (None: they succeed again)."""
        self._refusal = reason

    def die(self) -> None:
        """The worker process ends without a word, as a kill -9 would."""
        self._end_call()
        self._pid = None
        self._replies.put_nowait(None)

    def crash_on(self, marker: str | None) -> None:
        """A piece whose text holds `marker` kills the worker when it is sent."""
        self._crash_marker = marker

    @property
    def running(self) -> int | None:
        """The piece whose call is in progress."""
        return self._running

    def calls(self, kind: type[Message] = Piece) -> list[Message]:
        return [m for m in self.sent if isinstance(m, kind)]

    # -- the WorkerHandle seam ------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._pid

    async def prepare(self) -> None:
        self.prepared += 1

    async def start(self, setup: Setup, timeout: float) -> Ready:
        if self._refusal is not None:
            raise WorkerStartError(f"the synthesis process could not start: {self._refusal}")
        self.setups.append(setup)
        self._pid = 1000 + len(self.setups)
        self._replies = asyncio.Queue()
        self._plans.clear()
        self._steps.clear()
        self._heard.clear()
        return Ready(self._pid, ["jm_kumo"])

    async def send(self, message: Message) -> None:
        if self._pid is None:
            raise BrokenPipeError("the worker is gone")
        self.sent.append(message)
        if isinstance(message, Piece):
            if self._crash_marker is not None and self._crash_marker in message.text:
                self.die()
                return
            calls = deque(deque(self._cut(c)) for c in said(message.text, self.pad))
            for step in message.steps:  # resumed: the calls ended are not said again
                if step == -1:
                    calls.popleft()
            self._steps[message.id] = list(message.steps)
            self._heard[message.id] = message.heard
            skip = message.heard  # nor is what its listener heard of the call in progress
            while skip and calls and calls[0]:
                part = calls[0].popleft()
                if len(part) > skip:
                    calls[0].appendleft(part[skip:])
                skip = max(0, skip - len(part))
            self._plans[message.id] = calls
            self._begin(message.id, message.windows)
        elif isinstance(message, Next):
            self._begin(message.id, message.windows)
        elif isinstance(message, Drop):
            self._plans.pop(message.id, None)
        elif isinstance(message, Preempt) and message.soft:
            if self._running == message.id:
                self._soft.add(message.id)  # after its window in progress
        elif isinstance(message, Preempt):
            if self._running == message.id:
                self._preempted.add(message.id)
                self._changed.set()
        elif isinstance(message, Stop):
            await self.stop()

    async def receive(self) -> Message | None:
        if self._pid is None and self._replies.empty():
            return None
        return await self._replies.get()

    async def stop(self) -> int | None:
        if self._pid is None:
            return None
        self._end_call()
        self._pid = None
        self.stops += 1
        return 0

    async def kill(self) -> int | None:
        if self._pid is None:
            return None
        self._end_call()
        self._pid = None
        self.kills += 1
        return -9

    async def close(self) -> None:
        await self.stop()

    # -- the worker itself ------------------------------------------------------

    def _cut(self, pcm: bytes) -> list[bytes]:
        step = max(2, len(pcm) // self.windows // 2 * 2)
        parts = [pcm[i : i + step] for i in range(0, len(pcm), step)]
        while len(parts) > self.windows:  # the remainder joins the last window
            parts[-2:] = [parts[-2] + parts[-1]]
        return parts

    def _begin(self, piece: int, limit: int = 0) -> None:
        self._running = piece
        self._call = asyncio.get_running_loop().create_task(self._speak(piece, limit))

    async def _speak(self, piece: int, limit: int = 0) -> None:
        """One call of `piece`, or its next windows: at most `limit` if more than 0."""
        calls = self._plans.get(piece)
        if not calls:
            self._answer(Audio(piece, more=False))
            return
        windows = calls[0]
        while windows:
            while self._held and piece not in self._preempted:
                self._changed.clear()
                await self._changed.wait()
            if piece in self._preempted:
                # Before any audio the call is spoken again; after a window its
                # rest follows at the piece's next turn. Either way nothing is lost.
                self._preempted.discard(piece)
                self._answer(Audio(piece, more=True))
                return
            part = windows.popleft()
            if windows:
                heard = self._heard[piece] = self._heard.get(piece, 0) + len(part)
                steps = list(self._steps.get(piece, []))
                self._replies.put_nowait(Audio(piece, True, part, True, [], steps, heard))
                limit -= 1
                if limit == 0 or piece in self._soft:  # others go: the rest at its next turn
                    self._soft.discard(piece)
                    self._answer(Audio(piece, more=True))
                    return
                await asyncio.sleep(0)
            else:
                calls.popleft()
                self._steps.setdefault(piece, []).append(-1)
                self._heard[piece] = 0
                self._answer(Audio(piece, more=bool(calls), pcm=part))
        if not calls:
            self._plans.pop(piece, None)

    def _answer(self, reply: Audio) -> None:
        self._running = None
        steps, heard = list(self._steps.get(reply.id, [])), self._heard.get(reply.id, 0)
        self._replies.put_nowait(replace(reply, steps=steps, heard=heard))

    def _end_call(self) -> None:
        if self._call is not None and not self._call.done():
            self._call.cancel()
        self._call, self._running = None, None
        self._preempted.clear()
        self._soft.clear()
