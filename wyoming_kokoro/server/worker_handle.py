"""How the scheduler gets a worker process: spawned fresh, or forked from a waiting parent.

Either way the scheduler sees one worker: start (Setup → Ready), messages,
stop, and a death with its exit code.

- `SpawnedWorker` (default): `python -m wyoming_kokoro.worker` per burst. Nothing
  runs between bursts.
- `ForkedWorker` (`--prefork`): a small parent (the "zygote") waits between bursts
  with numpy, onnxruntime and kokoro-onnx already imported, and forks the worker
  when a burst begins, which skips interpreter start and imports (more so on a
  Raspberry Pi). The waiting parent's memory is the price. It
  hands its stdin/stdout to the child and reports the child's exit; after any
  irregular end it is replaced, so the pipe never carries half a message into the
  next burst.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import Protocol

from wyoming.event import async_read_event, async_write_event

from wyoming_kokoro.lifeline import child_env
from wyoming_kokoro.protocol import BadMessage, Exited, Message, Ready, Setup, Stop, decode

_LOGGER = logging.getLogger(__name__)


class WorkerStartError(RuntimeError):
    """No worker could be started; the text is meant for the client."""


class WorkerHandle(Protocol):
    """The scheduler's side of a worker, whatever makes it (runs in the server).

    A handle outlives its workers: `start` begins a burst, `stop` ends it, and
    `receive` returns None (or `Exited`) when the worker died.
    """

    @property
    def pid(self) -> int | None:
        """The worker's pid while one lives."""

    async def prepare(self) -> None:
        """Get ready for a quick start (at server start): may do nothing."""

    async def start(self, setup: Setup, timeout: float) -> Ready:
        """Start a worker and hand it `setup` (WorkerStartError if none comes up)."""

    async def send(self, message: Message) -> None: ...

    async def receive(self) -> Message | None: ...

    async def stop(self) -> int | None:
        """End the burst; the worker's exit code if known."""

    async def kill(self) -> int | None:
        """End the burst at once (SIGKILL: a stopped or hung worker heeds nothing else);
        the worker's exit code if known."""

    async def close(self) -> None:
        """End the burst and whatever waits between bursts (server shutdown)."""


class _Pipe:
    """A child process spoken to with protocol messages over its stdin/stdout."""

    def __init__(self, own_group: bool = False) -> None:
        self.process: asyncio.subprocess.Process | None = None
        # A process group of its own, so its descendants end with it: a forked
        # worker hanging in its load outlived its killed parent, and holding the
        # pipe it kept `wait()` from ever returning.
        self._own_group = own_group

    async def spawn(self, *args: str, env: dict[str, str] | None = None) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "wyoming_kokoro.worker",
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=1 << 24,
                env=child_env(env),  # it ends with the server, even hanging in its load
                start_new_session=self._own_group,
            )
        except OSError as err:  # fork refused (memory), interpreter missing
            raise WorkerStartError(f"the synthesis process could not start: {err}") from err

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def send(self, message: Message) -> None:
        assert self.process is not None and self.process.stdin is not None
        await async_write_event(message.event(), self.process.stdin)

    async def receive(self) -> Message | None:
        assert self.process is not None and self.process.stdout is not None
        event = await async_read_event(self.process.stdout)
        return decode(event) if event is not None else None

    async def end(self, timeout: float = 5.0) -> int | None:
        """Close stdin (EOF ends the process), then wait; kill if it lingers
        (with its process group, if it has one of its own)."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.returncode is None and process.stdin is not None:
            process.stdin.close()
        try:
            return await asyncio.wait_for(process.wait(), timeout)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if self._own_group:
                    os.killpg(process.pid, signal.SIGKILL)
                else:
                    process.kill()
            return await process.wait()


async def _start(pipe: _Pipe, setup: Setup, timeout: float) -> Ready:
    try:
        await pipe.send(setup)
        reply = await asyncio.wait_for(pipe.receive(), timeout)
    except asyncio.TimeoutError:
        raise WorkerStartError("the voice model could not be loaded: it took too long") from None
    except (OSError, BadMessage) as err:
        raise WorkerStartError(f"the synthesis process could not start: {err}") from err
    if not isinstance(reply, Ready):
        text = getattr(reply, "text", None) or "the synthesis process died"
        raise WorkerStartError(f"the voice model could not be loaded: {text}")
    return reply


def process_alive(pid: int) -> bool:
    """Running (a zombie left by a killed parent does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            pass
        return True


class SpawnedWorker:
    """A fresh interpreter per burst."""

    def __init__(self) -> None:
        self._pipe = _Pipe()
        self._pid: int | None = None

    @property
    def pid(self) -> int | None:
        """The worker's pid while it lives (one killed between bursts is replaced)."""
        return self._pid if self._pipe.alive else None

    async def prepare(self) -> None:
        pass  # nothing waits between bursts

    async def start(self, setup: Setup, timeout: float) -> Ready:
        await self._pipe.spawn()
        try:
            ready = await _start(self._pipe, setup, timeout)
        except WorkerStartError:
            await self.stop()
            raise
        self._pid = ready.pid
        return ready

    async def send(self, message: Message) -> None:
        await self._pipe.send(message)

    async def receive(self) -> Message | None:
        return await self._pipe.receive()

    async def stop(self) -> int | None:
        self._pid = None
        return await self._pipe.end()

    async def kill(self) -> int | None:
        self._pid = None
        return await self._pipe.end(timeout=0)  # killed at once, then reaped

    async def close(self) -> None:
        await self.stop()


class ForkedWorker:
    """Workers forked from a waiting parent that has the heavy modules imported."""

    def __init__(self) -> None:
        self._zygote = _Pipe(own_group=True)
        self._pid: int | None = None
        self._stale = False  # a worker died unseen: its Exited waits in the pipe

    @property
    def pid(self) -> int | None:
        """The forked worker's pid while it lives."""
        if self._pid is not None and not (self._zygote.alive and process_alive(self._pid)):
            self._pid, self._stale = None, True
        return self._pid

    @property
    def parent_pid(self) -> int | None:
        """The waiting parent's pid while it runs."""
        return self._zygote.process.pid if self._zygote.process and self._zygote.alive else None

    async def prepare(self) -> None:
        """Start the waiting parent (at server start, and after it was replaced)."""
        if not self._zygote.alive:
            # One BLAS thread: forking a process with a BLAS thread pool risks a hang.
            env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            await self._zygote.spawn("--zygote", env=env)
            _LOGGER.debug("Waiting parent %s started", self._zygote.process.pid)  # type: ignore[union-attr]

    async def start(self, setup: Setup, timeout: float) -> Ready:
        if self._stale:
            await self._replace()
        await self.prepare()
        try:
            ready = await _start(self._zygote, setup, timeout)
        except WorkerStartError:
            # The parent waits for a child that may hang: end both now.
            await self._replace(at_once=True)
            raise
        self._pid = ready.pid
        return ready

    async def send(self, message: Message) -> None:
        await self._zygote.send(message)

    async def receive(self) -> Message | None:
        reply = await self._zygote.receive()
        if isinstance(reply, Exited) or reply is None:
            await self._replace()  # whatever the child left half-written is gone with it
        return reply

    async def stop(self) -> int | None:
        """End the burst: the worker leaves on Stop, the parent reports its exit."""
        pid, self._pid = self._pid, None
        if pid is None or not self._zygote.alive:
            return None
        try:
            await self._zygote.send(Stop())
            while True:  # skip what the worker still sent for dropped pieces
                reply = await asyncio.wait_for(self._zygote.receive(), 5.0)
                if reply is None or isinstance(reply, Exited):
                    break
        except (asyncio.TimeoutError, OSError, BadMessage):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            await self._replace()
            return None
        if reply is None:
            await self._replace()
            return None
        return reply.code

    async def kill(self) -> int | None:
        """The forked worker killed; the parent too, since the pipe they share may hold
        half a message the worker was writing."""
        killed = self._pid is not None
        await self._replace()
        return -signal.SIGKILL if killed else None

    async def _replace(self, at_once: bool = False) -> None:
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
        self._pid, self._stale = None, False
        await self._zygote.end(timeout=0 if at_once else 5.0)
        with contextlib.suppress(WorkerStartError):
            await self.prepare()

    async def close(self) -> None:
        await self.stop()
        await self._zygote.end()
