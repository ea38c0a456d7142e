"""The worker process on its own: the job protocol over real pipes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import wer
from wyoming.event import Event, read_event, write_event

from wyoming_kokoro.assets import resolve
from wyoming_kokoro.worker import WorkerConfig

LONG = (
    "When you get home this evening, the lights in the kitchen and the hall will "
    "turn on by themselves, and the heating will already have warmed the house."
)


@contextlib.contextmanager
def running_worker(**options) -> Iterator[subprocess.Popen]:
    config = WorkerConfig(resolve(None, None, []), threads=2, normalize=True, lexicon={}, **options)
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro.worker", config.to_json()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        ready = read_event(proc.stdout)
        assert ready is not None and ready.type == "ready", ready
        yield proc
    finally:
        proc.stdin.close()  # EOF: the worker leaves on its own
        assert proc.wait(timeout=30) == 0


@pytest.fixture(scope="module")
def worker():
    with running_worker() as proc:
        yield proc


def _speak(proc: subprocess.Popen, job_id: int, text: str, first: bool) -> list[bytes]:
    data = {"id": job_id, "text": text, "voice": "jm_kumo", "speed": 1.0, "lang": "en-us"}
    write_event(Event("job", {**data, "first": first}), proc.stdin)
    proc.stdin.flush()
    calls = []
    while (event := read_event(proc.stdout)) is not None and event.type == "audio":
        assert event.data["id"] == job_id
        calls.append(event.payload)
    assert event is not None and event.type == "done", event
    return calls


def test_the_first_piece_speaks_its_first_clause_alone(recognizer) -> None:
    # Audio comes per model call: a listener waiting for the first piece gets
    # its first clause after one short call instead of the whole sentence.
    with running_worker(max_call_tokens=250) as worker:
        quick = _speak(worker, 1, LONG, first=True)
        whole = _speak(worker, 2, LONG, first=False)
    assert len(quick) == 2 and len(whole) == 1
    assert len(quick[0]) < len(quick[1])
    for calls in (quick, whole):
        assert wer(LONG, recognizer.transcribe(b"".join(calls))) <= 0.3


def test_long_sentences_are_spoken_in_short_calls_by_default(worker, recognizer) -> None:
    # The default keeps each call near 120 tokens, which bounds the worker's memory.
    calls = _speak(worker, 5, LONG, first=False)
    assert len(calls) == 2
    assert wer(LONG, recognizer.transcribe(b"".join(calls))) <= 0.3


def test_a_bad_job_fails_alone_and_the_worker_goes_on(worker) -> None:
    data = {"id": 3, "text": "Hello there.", "voice": "nobody", "speed": 1.0, "lang": "en-us"}
    write_event(Event("job", data), worker.stdin)
    worker.stdin.flush()
    failed = read_event(worker.stdout)
    assert failed is not None and failed.type == "failed" and "nobody" in failed.data["text"]
    assert _speak(worker, 4, "The door is open.", first=False)
