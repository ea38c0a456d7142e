"""The worker process on its own: the call-by-call protocol over real pipes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.cores import THREADS
from support.worker_pipe import LONG, receive, running_worker, send, speak, start_worker
from wyoming.event import write_event

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.protocol import (
    Audio,
    Drop,
    Failed,
    Fatal,
    Next,
    Piece,
    Preempt,
    Ready,
    Setup,
    WorkerConfig,
)
from wyoming_kokoro.settings import EngineSettings

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def worker():
    with running_worker() as proc:
        yield proc


@pytest.mark.slow
def test_without_windows_the_first_piece_speaks_its_opening_phrase_alone(listener) -> None:
    # Decoding whole calls (--decode whole), a listener waiting for the first piece
    # hears its opening phrase after one short call. (The same piece later in an
    # utterance keeps its clauses whole: the planner's test in test_engine.py.)
    with running_worker(decode="whole") as worker:
        quick = speak(worker, 1, LONG, awaited=True)
    # "When you get home this evening," is about 1.6 s of 24 kHz audio.
    sizes = [len(c) for c in quick]
    assert len(quick) >= 2 and len(quick[0]) < 2 * 24000 * 2, sizes
    assert 2 * len(quick[0]) < sum(sizes[1:]), sizes
    listener.check_later(LONG, b"".join(quick))


@pytest.fixture(scope="module")
def interleaved(worker) -> tuple[object, list[bytes], list[bytes]]:
    """LONG spoken call by call at the default length, a short piece spoken between
    its first two calls: LONG's first reply, the short piece's calls, LONG's rest."""
    send(worker, Piece(10, LONG, "jm_kumo", 1.0, "en-us", False))
    first = receive(worker)
    if not (isinstance(first, Audio) and first.more):
        return first, [], []  # the test says what went wrong
    short = speak(worker, 11, "The door is open.", awaited=True)
    rest = []
    send(worker, Next(10))
    while isinstance(reply := receive(worker), Audio):
        rest.append(reply.pcm)
        if not reply.more:
            break
        send(worker, Next(10))
    return first, short, rest


@pytest.mark.slow
def test_pieces_interleave_call_by_call(interleaved, listener) -> None:
    # The scheduler may switch pieces between any two calls: a second piece is
    # planned and spoken while the first still has calls to go.
    first, short, rest = interleaved
    assert isinstance(first, Audio) and first.more
    listener.check_later("The door is open.", b"".join(short))
    listener.check_later(LONG, first.pcm + b"".join(rest))


def test_a_dropped_piece_is_forgotten(worker) -> None:
    send(worker, Piece(20, LONG, "jm_kumo", 1.0, "en-us", False))
    reply = receive(worker)
    assert isinstance(reply, Audio) and reply.more
    send(worker, Drop(20))
    send(worker, Next(20))
    failed = receive(worker)
    assert isinstance(failed, Failed) and failed.id == 20


def test_a_bad_piece_fails_alone_and_the_worker_goes_on(worker) -> None:
    send(worker, Piece(3, "Hello there.", "nobody", 1.0, "en-us"))
    failed = receive(worker)
    assert isinstance(failed, Failed) and "nobody" in failed.text
    assert speak(worker, 4, "The door is open.", awaited=False)


def test_a_large_lexicon_travels_in_the_setup_message() -> None:
    # Linux refuses a single argument over 128 KiB: the configuration must not
    # ride on the command line (it did, and the server waited forever).
    lexicon = {f"word{n}": f"respelling number {n}" for n in range(12_000)}
    lexicon["kokoro"] = "/kˈOkəɹO/"
    assert len(str(lexicon)) > 300_000
    with running_worker(lexicon=lexicon) as proc:
        assert speak(proc, 1, "Kokoro speaks.", awaited=False)


def test_an_unloadable_model_is_one_fatal_message(tmp_path) -> None:
    assets = resolve(None, None, [])
    broken = tmp_path / "model.onnx"  # not a published name: loaded unverified, and fails
    broken.write_bytes(b"not a model")
    config = WorkerConfig(
        type(assets)(broken, assets.voices, assets.voice_names, "test"),
        EngineSettings(threads=1),
    )
    proc = start_worker(config)
    fatal = receive(proc)
    assert isinstance(fatal, Fatal) and "cannot load the model" in fatal.text
    assert proc.wait(timeout=30) == 1


@pytest.mark.slow
def test_calls_are_cut_smaller_on_request(worker, interleaved, listener) -> None:
    # While other clients wait, the scheduler asks for shorter calls; the words
    # all come, in more calls (than LONG at the default length, spoken interleaved).
    send(worker, Piece(30, LONG, "jm_kumo", 1.0, "en-us", False))
    calls = []
    while isinstance(reply := receive(worker), Audio):
        calls.append(reply.pcm)
        if not reply.more:
            break
        send(worker, Next(30, limit=40))
    first, _, rest = interleaved
    assert isinstance(first, Audio) and rest
    whole = [first.pcm, *rest]
    sizes = [len(c) for c in calls], [len(c) for c in whole]
    assert len(calls) > len(whole) and max(map(len, calls[1:])) < len(whole[1]), sizes
    listener.check_later(LONG, b"".join(calls))


@pytest.mark.slow
def test_a_preempted_call_is_given_up_and_spoken_again_later(worker, listener) -> None:
    # The scheduler stops a running call when a newcomer needs the model; the
    # worker answers at once with no audio, and the next Next speaks it whole.
    send(worker, Piece(40, LONG, "jm_kumo", 1.0, "en-us", False))
    first = receive(worker)
    assert isinstance(first, Audio) and first.more
    send(worker, Next(40))
    send(worker, Preempt(40))  # arrives while the call runs (a call takes > 1 s)
    stopped = receive(worker)
    assert isinstance(stopped, Audio) and stopped.pcm == b"" and stopped.more
    calls = [first.pcm]
    while True:
        send(worker, Next(40))
        reply = receive(worker)
        assert isinstance(reply, Audio)
        calls.append(reply.pcm)
        if not reply.more:
            break
    listener.check_later(LONG, b"".join(calls))
    send(worker, Preempt(99))  # nothing runs for it: ignored
    assert speak(worker, 41, "The door is open.", awaited=False)


def test_a_piece_goes_on_on_a_new_worker_from_where_its_listener_was(worker) -> None:
    # A worker died with a piece part-spoken: the next is sent the piece again with the
    # steps and bytes heard of the last message it got, and says the rest, nothing
    # twice. Its calls, cut short as on the dead worker, decode whole here: the same
    # samples, so what comes is the rest of the original to the byte.
    send(worker, Piece(50, LONG, "jm_kumo", 1.0, "en-us", False))
    spoken = [receive(worker)]
    while isinstance(spoken[-1], Audio) and spoken[-1].more:
        send(worker, Next(50, limit=40 if len(spoken) == 1 else None))
        spoken.append(receive(worker))
    assert all(isinstance(reply, Audio) for reply in spoken), spoken
    assert len(spoken) >= 3, [len(reply.pcm) for reply in spoken]
    last = spoken[1]  # the second call was cut short: its first part is said
    assert last.steps == [-1, 40, -1] and last.heard == 0
    heard = len(spoken[2].pcm) // 4 * 2  # the worker died part-way through the third
    send(worker, Piece(51, LONG, "jm_kumo", 1.0, "en-us", False, steps=last.steps, heard=heard))
    rest = [receive(worker)]
    while isinstance(rest[-1], Audio) and rest[-1].more:
        send(worker, Next(51))
        rest.append(receive(worker))
    expected = b"".join(reply.pcm for reply in spoken[2:])[heard:]
    assert b"".join(reply.pcm for reply in rest) == expected


def test_the_setup_is_read_as_wyoming_frames_it() -> None:
    """The worker reads its first message without the wyoming library (cold start):
    whatever wyoming's writer produces, with data and a payload, it must read."""
    import io

    from wyoming.event import Event

    from wyoming_kokoro.worker.loop import read_setup

    setup = Setup({"threads": 2, "lexicon": {"HA": "home assistant"}}, warm_up=True)
    buffer = io.BytesIO()
    write_event(setup.event(), buffer)
    write_event(Event("setup", {"config": {}}, payload=b"\0" * 10), buffer)
    write_event(Event("stop", {}), buffer)
    buffer.seek(0)
    assert read_setup(buffer) == setup
    assert read_setup(buffer) == Setup({})  # a payload is skipped whole
    assert read_setup(buffer) is None  # not a Setup
    assert read_setup(buffer) is None  # end of input


def test_a_worker_given_no_setup_exits_with_an_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_kokoro.worker"],
        input=b'{"type": "setup", "data_length": 5}\nnot j',
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert b"Bad setup message" in result.stderr


def test_a_badly_shaped_voice_fails_only_its_own_pieces(tmp_path) -> None:
    # A user's voices file with some voices of the wrong shape: speaking in one
    # fails that request alone, and the worker (and a piece half-spoken) goes on.
    import numpy as np

    embedded = resolve(None, None, [])
    with np.load(embedded.voices) as found:
        voices = {name: found[name] for name in found.files}
    voices["af_flat"] = voices["jm_kumo"][:, 0, :]  # (510, 256): the model rejects its rank
    voices["af_empty"] = voices["jm_kumo"][:0]  # no rows: indexing it fails
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "voices.npz", **voices)
    # Handed to the worker as is: resolve() now leaves such voices out, so the worker's
    # own guard is tested with a file that got past it (an older server, --voices).
    assets = type(embedded)(
        embedded.model, data / "voices.npz", tuple(voices), "test", embedded.embedded_model
    )
    config = WorkerConfig(assets, EngineSettings(threads=THREADS))
    proc = start_worker(config)
    try:
        ready = receive(proc)
        assert isinstance(ready, Ready), ready
        send(proc, Piece(1, LONG, "jm_kumo", 1.0, "en-us", False))
        first = receive(proc)
        assert isinstance(first, Audio) and first.more, first
        for job_id, voice in ((2, "af_flat"), (3, "af_empty")):
            send(proc, Piece(job_id, "Hello there.", voice, 1.0, "en-us"))
            failed = receive(proc)
            assert isinstance(failed, Failed) and failed.id == job_id, failed
            assert proc.poll() is None
        send(proc, Next(1))  # the piece begun before goes on where it was
        reply = receive(proc)
        assert isinstance(reply, Audio) and reply.id == 1 and reply.pcm, reply
        assert speak(proc, 4, "The door is open.", awaited=False)
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
