"""All the cores a long render may use: speaking processes, each with the model on one
onnxruntime thread, take the parts in the book's order; kokoro-say itself only hands
them out and counts what is done (the audio is joined in order from the work dir).

One thread per process wastes the least: a call's own threads wait on each other,
separate parts never do. Each process holds its own model, so the count is capped by
the memory available as well as by the CPUs (see docs/long-form.md).
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_kokoro import lifeline
from wyoming_kokoro.catalog.voices import parse_voice
from wyoming_kokoro.cpus import affinity_cpus, cgroup_cpu_quota

from .plan import Part, Say
from .speaking import Setup, Speaker

if TYPE_CHECKING:
    from wyoming_kokoro.synthesis.loudness import Leveler

_LOGGER = logging.getLogger("kokoro_say")

# What one speaking process holds at most (the model, its session's buffers, a long
# part's audio), with room to spare: a process is started only if this much is free.
PROCESS_MB = 500
_MEMINFO = Path("/proc/meminfo")
# More text than the loudness measurement needs (ten seconds of speech and a margin).
MEASURE_CHARS = 250

# What a terminal sends its whole process group; kokoro-say alone acts on them.
_GROUP_SIGNALS = {signal.SIGINT, signal.SIGHUP}

Job = tuple[int, Part, str]  # the part's index in the plan, the part, its key


class SpeakingFailed(RuntimeError):
    """A speaking process failed; the message is for the user."""


def usable_cpus() -> int:
    """The CPUs of this process's affinity, within its cgroup quota."""
    cpus = affinity_cpus()
    quota = cgroup_cpu_quota()
    return max(1, min(cpus, math.ceil(quota))) if quota is not None else cpus


def available_mb(meminfo: Path = _MEMINFO) -> int | None:
    """MemAvailable in MiB (None where /proc does not say)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def process_count(threads: int, parts: int, memory_mb: int | None, cpus: int) -> int:
    """How many speaking processes: `--threads` if given (else every usable CPU), no
    more than the parts to speak nor than the memory free holds, at least one."""
    wanted = threads or cpus
    if memory_mb is not None:
        wanted = min(wanted, memory_mb // PROCESS_MB)
    return max(1, min(wanted, parts))


def render(
    jobs: Sequence[Job],
    processes: int,
    setup: Setup,
    done: Callable[[int], None],
    alone: int = 0,
) -> None:
    """Speak every job, calling `done` with its index as each is kept; the first
    `alone` jobs by one process before the others start (see `to_measure`)."""
    if not jobs:
        return
    if processes <= 1:
        # One process: the model here, on the threads --threads asked for.
        speaker = Speaker(setup)
        for index, part, key in jobs:
            speaker.speak(part, key)
            done(index)
        return
    if alone:
        _in_processes(jobs[:alone], 1, setup, done)
        jobs = jobs[alone:]
    if jobs:
        _in_processes(jobs, processes, setup, done)


def unmeasured(parts: Sequence[Part], installed: tuple[str, ...], leveler: Leveler) -> bool:
    """Whether a voice these parts speak in has no loudness measured yet."""
    voices = {s.voice for part in parts for s in part.steps if isinstance(s, Say)}
    return any(leveler.loudness(parse_voice(v, installed)) is None for v in voices)


def to_measure(chars: Sequence[int], voices_unmeasured: bool) -> int:
    """How many leading jobs (of these sizes) one process speaks alone first.

    A voice whose loudness is not known yet is measured on its first seconds of
    speech and kept (synthesis/loudness.py); until then its audio is not levelled.
    Processes starting together would each speak their first part so, every one at
    another chapter: one process speaks enough first, and the others start levelled.
    """
    if not voices_unmeasured:
        return 0
    total = 0
    for count, size in enumerate(chars, 1):
        total += size
        if total >= MEASURE_CHARS:
            return count
    return len(chars)


def _in_processes(
    jobs: Sequence[Job], processes: int, setup: Setup, done: Callable[[int], None]
) -> None:
    # spawn: a fresh interpreter, not a fork of a process with threads. A pipe each, no
    # queues: nothing shared is left to clean up when kokoro-say is killed.
    context = multiprocessing.get_context("spawn")
    waiting = deque(jobs)
    workers: dict[Connection, multiprocessing.process.BaseProcess] = {}
    busy: set[Connection] = set()  # the processes with a part to speak

    def hand_out(conn: Connection) -> None:
        if waiting:
            conn.send(waiting.popleft())
            busy.add(conn)
        else:
            conn.send(None)  # no more: the process ends
            busy.discard(conn)

    finished = False
    try:
        # Ctrl-C reaches the terminal's whole process group: a process still starting
        # could not ignore it yet, and printed its own traceback. Ignored while they
        # are started, it stays ignored in them (an ignored signal survives exec, and
        # Python then sets no handler); blocked meanwhile, kokoro-say gets it after.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _GROUP_SIGNALS)
        handlers = {sig: signal.signal(sig, signal.SIG_IGN) for sig in _GROUP_SIGNALS}
        try:
            for n in range(processes):
                ours, theirs = context.Pipe()
                worker = context.Process(
                    target=serve, args=(setup, theirs, os.getpid()), daemon=True, name=f"speak-{n}"
                )
                worker.start()
                theirs.close()
                workers[ours] = worker
                hand_out(ours)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        while busy:
            ready = wait(list(busy), timeout=0.5)
            if not ready:
                _check_alive([workers[c] for c in busy])
                continue
            for conn in ready:
                assert isinstance(conn, Connection)
                try:
                    index, error = conn.recv()
                    if error is None:
                        done(index)
                        hand_out(conn)
                except (EOFError, OSError):  # its end of the pipe closed: it died
                    workers[conn].join(5)
                    _check_alive([workers[conn]], ended=True)
                    raise SpeakingFailed("a speaking process ended unexpectedly") from None
                if error is not None:
                    raise SpeakingFailed(error)
        finished = True
    finally:
        # Done: each process has read its None and ends. Stopped or failed: end them.
        for process in workers.values():
            if finished:
                process.join(10)
            if process.is_alive():
                process.terminate()
        for conn, process in workers.items():
            process.join(10)
            conn.close()


def _check_alive(
    workers: Sequence[multiprocessing.process.BaseProcess], ended: bool = False
) -> None:
    for worker in workers:
        code = worker.exitcode
        if code is not None and (code != 0 or ended):
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            raise SpeakingFailed(
                f"a speaking process ended unexpectedly ({how}); run the same command "
                "again to go on where it stopped"
            )
    if all(not w.is_alive() for w in workers) and not ended:
        raise SpeakingFailed("the speaking processes ended before the book was spoken")


def serve(setup: Setup, conn: Connection, parent: int) -> None:
    """A speaking process: parts from `conn` until None, each answered on it."""
    lifeline.die_with_parent(parent)  # a killed kokoro-say leaves no speaking process
    # Ctrl-C reaches the whole process group: kokoro-say decides, and ends us by SIGTERM.
    for sig in _GROUP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        speaker = Speaker(setup, threads=1)
    except Exception as err:  # the model's own failures have many types
        _LOGGER.debug("A speaking process could not load the model", exc_info=True)
        conn.send((-1, f"cannot load the model: {err}"))
        return
    while (job := conn.recv()) is not None:
        index, part, key = job
        try:
            speaker.speak(part, key)
        except Exception as err:
            _LOGGER.debug("Speaking part %d failed", index, exc_info=True)
            conn.send((index, f"cannot speak the book: {err}"))
            return
        conn.send((index, None))
