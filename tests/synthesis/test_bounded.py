"""Long calls decoded in windows for memory (`--max-decode-seconds`), with the real model."""

from __future__ import annotations

import numpy as np
import pytest
from support.audio_distance import log_mel_distance
from support.cores import THREADS
from support.taught import taught_in_run
from support.worker_pipe import receive_one, running_worker, send

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.options import MAX_DECODE_SECONDS
from wyoming_kokoro.protocol import Audio, Piece
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting
from wyoming_kokoro.synthesis.decoding import choose
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.prior import TRUSTED, VoicePriors

LONG = (
    "The living room lights are on, the heating is set to twenty one degrees, "
    "and the door is locked."
)
BOUND = 40  # frames: 1 s, the shortest bound

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model


@pytest.fixture(scope="module", autouse=True)
def cut() -> None:
    """The cut model, made here if no test before has made it (a fresh cache)."""
    assets = resolve(None, None, [])
    cutting.ready(assets.model) or cutting.build(assets, threads=2)


def test_a_long_call_is_decoded_in_windows_no_longer_than_the_bound(tmp_path) -> None:
    settings = EngineSettings(threads=THREADS, max_decode_seconds=1.0)
    engine = Engine(resolve(None, None, []), settings)
    split = engine.cut
    assert split is not None
    engine.priors = VoicePriors(tmp_path, split.kinds)
    voice = engine.voice("jm_kumo")
    call = engine.plan(LONG, voice)[0]
    assert not call.windowed  # nobody waits for it: only the bound makes windows

    decoded: list[int] = []  # frames of each generator run, context included
    wholes: list[int] = []
    learned: list[dict[str, np.ndarray]] = []  # the statistics of each whole decode
    fed_run, decode = split.fed_run, split.decode

    def counted_run(plan, statistics, a0, b0, tag=None):  # type: ignore[no-untyped-def]
        decoded.append(b0 - a0)
        return fed_run(plan, statistics, a0, b0, tag)

    def counted_decode(plan, tag=None):  # type: ignore[no-untyped-def]
        wholes.append(split.frames(plan))
        audio, statistics = decode(plan, tag)
        learned.append(statistics)
        return audio, statistics

    split.fed_run, split.decode = counted_run, counted_decode  # type: ignore[method-assign]
    # A voice that has taught nothing yet has no statistics to decode windows with:
    # the call is decoded whole (and teaches).
    whole = list(engine.stream(call))
    assert len(whole) == 1 and len(wholes) == 1 and not decoded
    assert wholes[0] > 3 * BOUND
    # Nor does one that has taught short calls only: a sentence's statistics are not
    # a short reply's, and only a call decoded whole teaches them.
    short = split.plan(engine.inputs(engine.plan("The door is open.", voice)[0]))
    plan = split.plan(engine.inputs(call))
    statistics, traits = split.statistics(short), split.traits(short)
    others = VoicePriors(None, split.kinds)
    for _ in range(TRUSTED):
        others.learn("jm_kumo", statistics, traits)
    # (The engine decodes as `choose` says: the first call above showed it decoding whole.)
    assert choose(call, plan, split, others, settings.max_decode_seconds).whole
    # The call's first (whole) decode gave its own statistics: not decoded again.
    statistics, traits = learned[0], split.traits(plan)
    for _ in range(TRUSTED - 1):  # taught this call's own statistics
        engine.priors.learn("jm_kumo", statistics, traits)
    wholes.clear()
    windows = list(engine.stream(call))
    assert not wholes, "decoded whole despite the bound"
    assert len(windows) >= 3 and [last for _, last in windows] == [False] * (len(windows) - 1) + [
        True
    ]
    context = split.windows.context
    assert decoded and max(decoded) <= BOUND + 2 * context
    # Decoded with the call's own statistics, the windows are its whole decode.
    joined = np.concatenate([pcm for pcm, _ in windows])
    assert len(joined) == len(whole[0][0])
    assert log_mel_distance(whole[0][0] / 32768, joined / 32768) < 0.5
    # A listener's first call is in windows anyway, small first: none longer either,
    # even the first on a CPU this slow (17 ms a frame: unbounded, 46 frames).
    for _ in range(15):
        split.clock.timed(100, 1.7)
    decoded.clear()
    awaited = engine.plan(LONG, voice, awaited=True)[0]
    assert awaited.windowed and len(list(engine.stream(awaited))) >= 3
    assert not wholes and max(decoded) <= BOUND + 2 * context


def test_the_bound_is_checked_and_off_by_default() -> None:
    assert EngineSettings().max_decode_seconds == 0
    with pytest.raises(ValueError, match="max_decode_seconds"):
        EngineSettings(max_decode_seconds=-1)
    with pytest.raises(ValueError, match="max_decode_seconds"):
        EngineSettings(max_decode_seconds=float("nan"))
    assert MAX_DECODE_SECONDS.high is not None
    with pytest.raises(ValueError):
        EngineSettings(max_decode_seconds=MAX_DECODE_SECONDS.high + 1)


def test_a_worker_told_the_bound_sends_a_long_call_window_by_window(engine, listener) -> None:
    # Until jm_kumo has taught enough calls, they are decoded whole; once it has, they
    # come window by window. Taught in the cache before the worker starts, as three
    # whole calls of each sentence would teach it.
    taught_in_run(engine)
    with running_worker(max_decode_seconds=1.0) as worker:
        send(worker, Piece(1, LONG, "jm_kumo", 1.0, "en-us", False))
        windows = []
        while isinstance(answer := receive_one(worker), Audio) and answer.window:
            windows.append(answer.pcm)
        assert isinstance(answer, Audio) and not answer.more
        assert len(windows) >= 2, "the call was not cut for memory"
        listener.check_later(LONG, b"".join([*windows, answer.pcm]))
