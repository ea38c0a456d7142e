"""One model call of a job on the worker, as the scheduler makes it.

The message that asks for it (a piece's first call plans it, `Piece`; a later one
goes on, `Next`, shorter while others wait), the windows handed to the job's
listener as they come, and what the reply comes to: audio, a failed piece, or a
worker lost (dead, or hung past the watchdog's bound and killed) and what that costs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from wyoming_kokoro.protocol import Audio, BadMessage, Drop, Exited, Failed, Next, Piece
from wyoming_kokoro.server import watchdog
from wyoming_kokoro.server.turns import Job, PieceFailed, Turns
from wyoming_kokoro.server.worker_handle import WorkerHandle

# A call's lines go out under the scheduler's name, as they always did: one name to
# follow the worker's story by.
_LOGGER = logging.getLogger("wyoming_kokoro.server.scheduler")

# While other clients wait for the model, a long piece goes on in calls of at most
# this many phonemes (about 3 s of speech), so turns come round sooner. The cut
# falls between words, where the voice restarts its intonation: only then.
SHARED_CALL_TOKENS = 50
# Likewise a call decoded in windows goes on for at most this many windows a turn
# (up to 2.4 s of speech: while others wait, windows stay within 48 frames).
SHARED_WINDOWS = 2

# Audio from the worker for a job's listener, and the words said from its start.
Take = Callable[[Job, bytes, list[list[Any]] | None], None]


async def run_call(
    worker: WorkerHandle,
    turns: Turns,
    watch: watchdog.Watchdog,
    job: Job,
    longest: int,
    take: Take,
) -> None:
    """One model call of `job`: its first (which plans the piece) or its next.

    `longest`: the most phonemes one call of the loaded model holds (the watchdog's
    bound grows with it); `take` hands audio to the job's listener."""
    sent = hung = False
    try:
        for dropped in turns.drops:
            await worker.send(Drop(dropped))
        turns.drops.clear()
        # Another listener waits for its first audio: told with the call, the worker
        # stops after one window, not one later when a Preempt would reach it.
        turns.sharing = turns.awaiting_audio(job.client)
        windows = 1 if turns.sharing else SHARED_WINDOWS if turns.crowded else 0
        _LOGGER.debug(
            "Call for job %d of client %d%s",
            job.id,
            job.client,
            f" (others wait: at most {windows} windows)" if windows else "",
        )
        # How long the listener can wait for this call (the worker decodes it in
        # windows if a whole call would be late).
        in_hand = turns.in_hand(job.client)
        # Only a later call of a piece is cut shorter (Next); its first is as planned.
        limit = SHARED_CALL_TOKENS if turns.crowded and job.started else None
        if job.started:
            await worker.send(Next(job.id, limit, windows, in_hand))
        else:
            job.started = True
            if job.steps or job.heard:
                _LOGGER.info("Job %d of client %d goes on on a new worker", job.id, job.client)
            in_hand = None if job.awaited else in_hand
            piece = Piece(
                job.id,
                job.text,
                job.voice,
                job.speed,
                job.lang,
                awaited=job.awaited,
                volume=job.volume,
                windows=windows,
                in_hand=in_hand,
                words=job.words,
                steps=job.steps,
                heard=job.heard,
                sentence_pause=job.sentence_pause,
                normalize=job.normalization.normalize,
                normalize_off=list(job.normalization.off),
            )
            await worker.send(piece)
        sent = True
        turns.in_flight = job
        bound = watch.bound(longest, limit, job.speed)
        reply = await watch.receive(worker, bound)
        while isinstance(reply, Audio) and reply.window and reply.id == job.id:
            job.steps, job.heard = reply.steps, reply.heard
            take(job, reply.pcm, reply.words)  # a window: its listener hears it now
            reply = await watch.receive(worker, bound)
    except watchdog.Hung:
        _LOGGER.error(
            "Job %d of client %d made no progress for %.0f s: the worker is hung",
            job.id,
            job.client,
            bound,
        )
        reply, hung = None, True
    except (ConnectionError, asyncio.IncompleteReadError, OSError, BadMessage) as err:
        _LOGGER.debug("Pipe to the worker broke: %s", err)
        reply = None
    finally:
        turns.in_flight = None
    if isinstance(reply, Audio) and reply.id == job.id:
        watch.answered()
        job.steps, job.heard = reply.steps, reply.heard
        take(job, reply.pcm, reply.words)
        if not reply.more:
            turns.done(job)
        return
    if isinstance(reply, Failed) and reply.id == job.id:
        watch.answered()
        turns.failed(job, PieceFailed(reply.text))
        return
    if hung:
        code = await worker.kill()
    else:
        code = reply.code if isinstance(reply, Exited) else await worker.stop()
    watch.lost(turns, job if sent else None, code)
