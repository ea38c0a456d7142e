"""A worker that hangs or dies: how long a call may go without progress, and what a
lost worker costs (the piece in flight; everything waiting, after too many in a row).

Progress is any message from the worker: a window or the call's answer. A call that
makes none for its bound costs its worker (killed: a stopped or hung process ignores
anything gentler), and the piece in flight is skipped as if the worker had crashed.
The bound must never be reached by a slow Raspberry Pi under load, so it is the
longest a call of that many phonemes could take there, plus a floor.
"""

from __future__ import annotations

import asyncio
import logging
import os

from wyoming_kokoro.protocol import Message
from wyoming_kokoro.server.turns import Job, SynthesisError, Turns
from wyoming_kokoro.server.worker_handle import WorkerHandle

_LOGGER = logging.getLogger(__name__)

# A floor for any call: a piece's first call also plans it, and the first use of a
# language loads its dictionaries (OpenJTalk, jieba) in the worker.
FLOOR_S = 30.0
# The longest one phoneme lasts at speed 1, a sentence's pause included: generous,
# so a call's speech is never underestimated.
SPEECH_PER_PHONEME_S = 0.15
# Seconds of decoding per second of speech at the slowest a Raspberry Pi gives under
# load, with a call decoded whole (no window shows progress before its end).
SLOWEST_REAL_TIME = 5.0
# Workers that die one after another, none answering a call in between: something is
# wrong beyond one piece, and the waiting answers are told so rather than each piece
# costing a worker.
DEATHS_IN_A_ROW = 3

# Test-only: every call's bound in seconds, so tests need not wait minutes for a hung
# worker to be noticed. Not a feature; never set it in production.
TEST_ONLY_ENV = "KOKORO_TEST_ONLY_STALL_SECONDS"


def bound_for_tests() -> float | None:
    """The bound the tests set in the environment (None: derived per call)."""
    value = os.environ.get(TEST_ONLY_ENV)
    return float(value) if value else None


def call_bound(phonemes: int, speed: float) -> float:
    """Seconds a call of at most `phonemes` phonemes at `speed` may go without progress."""
    speech = phonemes * SPEECH_PER_PHONEME_S / max(speed, 0.1)
    return FLOOR_S + SLOWEST_REAL_TIME * speech


class Hung(Exception):
    """The worker sent nothing for as long as its call may take."""


class Watchdog:
    """The scheduler's watch on its workers: their calls' progress and their deaths."""

    def __init__(self, bound: float | None = None) -> None:
        """`bound`: every call's, in seconds (None: from its length, `call_bound`)."""
        self._bound = bound
        self._deaths = 0  # workers lost since a call was last answered
        self.stalled = False  # a hung worker was found, and no new one is ready yet

    def bound(self, longest: int, limit: int | None, speed: float) -> float:
        """How long a call may go without a message: of at most `longest` phonemes (the
        model call's), or `limit` if asked for fewer, at `speed`."""
        if self._bound is not None:
            return self._bound
        return call_bound(min(longest, limit or longest), speed)

    async def receive(self, worker: WorkerHandle, bound: float) -> Message | None:
        """The worker's next message; `Hung` if none comes within `bound` seconds.
        (Not asyncio.wait_for: before Python 3.12 it can swallow a cancellation.)"""
        receiving = asyncio.ensure_future(worker.receive())
        try:
            done, _ = await asyncio.wait({receiving}, timeout=bound)
        finally:
            if not receiving.done():
                receiving.cancel()
        if not done:
            self.stalled = True
            raise Hung
        return receiving.result()

    def answered(self) -> None:
        """The worker answered a call: it works."""
        self._deaths = 0

    def lost(self, turns: Turns, job: Job | None, code: int | None) -> None:
        """The worker died (or was killed, hung) with `job`'s call in flight (None: before
        a call reached it). That piece is skipped: whatever killed one worker would kill
        the next. The pieces it held go on on a new worker (`Turns.new_burst`); after
        too many deaths in a row the waiting jobs fail instead."""
        self._deaths += 1
        if job is None:
            _LOGGER.warning("The worker died (exit code %s) between calls", code)
        else:
            _LOGGER.warning(
                "The worker died (exit code %s) while speaking job %d of client %d: "
                "that piece is skipped",
                code,
                job.id,
                job.client,
            )
            turns.skip(job)
        if self._deaths >= DEATHS_IN_A_ROW:
            _LOGGER.error("Workers keep dying: failing the waiting requests")
            self._deaths = 0
            self.stalled = False
            turns.fail_all(SynthesisError(f"the synthesis process died (exit code {code})"))
