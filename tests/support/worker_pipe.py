"""A real worker process on a pipe: start it, send messages, read replies."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

from wyoming.event import read_event, write_event

from support.cores import THREADS
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.protocol import (
    Audio,
    Message,
    Next,
    Piece,
    Ready,
    Setup,
    WorkerConfig,
    decode,
)
from wyoming_kokoro.settings import EngineSettings

LONG = (
    "When you get home this evening, the lights in the kitchen and the hall will "
    "turn on by themselves, and the heating will already have warmed the house."
)


def start_worker(config: WorkerConfig) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    send(proc, Setup(config.to_dict()))
    return proc


def send(proc: subprocess.Popen, message: Message) -> None:
    write_event(message.event(), proc.stdin)
    proc.stdin.flush()


def receive_one(proc: subprocess.Popen) -> Message | None:
    event = read_event(proc.stdout)
    return decode(event) if event is not None else None


def receive(proc: subprocess.Popen) -> Message | None:
    """The answer to a Piece or Next, with the windows sent before it joined in."""
    windows = []
    while isinstance(message := receive_one(proc), Audio) and message.window:
        windows.append(message.pcm)
    if windows and isinstance(message, Audio):
        return Audio(message.id, message.more, b"".join([*windows, message.pcm]))
    return message


@contextlib.contextmanager
def running_worker(lexicon: dict[str, str] | None = None, **settings) -> Iterator[subprocess.Popen]:
    """A real worker on the model from PyPI; `settings`: EngineSettings' fields."""
    engine = EngineSettings(**{"threads": THREADS, **settings})
    config = WorkerConfig(resolve(None, None, []), engine, lexicon or {})
    proc = start_worker(config)
    try:
        ready = receive(proc)
        assert isinstance(ready, Ready) and ready.pid == proc.pid, ready
        yield proc
    finally:
        proc.stdin.close()  # EOF: the worker leaves on its own
        assert proc.wait(timeout=30) == 0


def speak(proc: subprocess.Popen, job_id: int, text: str, awaited: bool) -> list[bytes]:
    """Every call of one piece, asked for one at a time as the scheduler does."""
    send(proc, Piece(job_id, text, "jm_kumo", 1.0, "en-us", awaited))
    calls = []
    while True:
        reply = receive(proc)
        assert isinstance(reply, Audio) and reply.id == job_id, reply
        calls.append(reply.pcm)
        if not reply.more:
            return calls
        send(proc, Next(job_id))
