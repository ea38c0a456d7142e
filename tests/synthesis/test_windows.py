"""Decoding a call in windows: the cut model, the windows' sound, turns between windows.

The cut model must give the single graph's audio bit for bit; windows decoded with the
whole call's own statistics must give the whole decode; the estimate that lets the
first window come early may change the sound only within bounds measured here; and
a call stopped between windows must lose and repeat nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import onnx
import pytest
from support.audio_distance import log_mel_distance, log_mel_frames
from support.cores import THREADS
from support.recorded_windows import recorded_windows
from support.taught import SENTENCES, taught_in_run
from support.worker_pipe import receive, receive_one, running_worker, send, speak

from wyoming_kokoro.catalog.assets import Assets, model_file, resolve
from wyoming_kokoro.catalog.cut import LAYOUT, VERIFIED, cut_dir
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.protocol import Audio, Drop, Next, Piece, Preempt
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting, graph
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.decoding import choose
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.loading import ModelLoading, load_cut
from wyoming_kokoro.synthesis.pacing import Clock, first_size
from wyoming_kokoro.synthesis.prior import TRUSTED, VoicePriors
from wyoming_kokoro.synthesis.runtime import create_session

# One sentence long enough for several windows after the first.
LONG = (
    "The living room lights are on, the heating is set to twenty one degrees, "
    "and the door is locked."
)

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def assets() -> Assets:
    return resolve(None, None, [])


@pytest.fixture(scope="module")
def cut(assets) -> CutModel:
    directory = cutting.ready(assets.model) or cutting.build(assets, threads=2)
    return CutModel(load_cut(directory, THREADS))


@pytest.fixture(scope="module")
def whole_graph(assets):
    with model_file(assets) as model:
        return create_session(model, THREADS, None)


@pytest.fixture(scope="module")
def taught(engine, cut) -> None:
    """jm_kumo taught in the run's cache (the session engine and workers started after
    read it there), as three whole calls of each sentence would teach it: windows
    decoded with the voice's statistics, not whole as an untaught voice's are."""
    taught_in_run(engine)


def inputs(engine: Engine, text: str) -> dict[str, np.ndarray]:
    call = engine.plan(text, engine.voice("jm_kumo"))[0]
    return engine.inputs(call)


@pytest.fixture(scope="module")
def long_whole(engine, cut) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    """LONG's plan, its whole decode and the statistics of that decode: decoded once
    for the tests that need them (a plan is the same on every engine of the model)."""
    plan = cut.plan(inputs(engine, LONG))
    whole, statistics = cut.decode(plan)
    return plan, whole, statistics


def test_the_cut_model_speaks_as_the_single_graph(engine, cut, whole_graph) -> None:
    # A sentence and a short reply: bit for bit at two lengths (more sentences, or
    # longer ones, only repeat the same graph at other lengths).
    for text in ("The front door is locked.", "Hi."):
        x = inputs(engine, text)
        expected = whole_graph.run(None, x)[0].ravel()
        assert np.array_equal(cut.whole(cut.plan(x)), expected), text


def test_the_generator_reads_each_activation_it_quantizes_once(assets, cut) -> None:
    # Picking the fed or own scale after computing both made each quantized
    # activation a second reader, and onnxruntime then held ~140 MB more through a
    # long call decoded whole (bench A3). Each is read by one If, as in the single graph.
    generator = onnx.load(str(cutting.ready(assets.model) / graph.GENERATOR))
    readers: dict[str, int] = {}
    for node in generator.graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    choices = [n for n in generator.graph.node if n.op_type == "If"]
    assert not [n for n in generator.graph.node if n.op_type == "DynamicQuantizeLinear"]
    # One choice per quantization, each fed a zero point.
    assert len(choices) == list(cut.kinds.values()).count(np.dtype(np.uint8)) > 0
    for choice in choices:
        branches = {a.name: a.g for a in choice.attribute}
        (own,) = branches["else_branch"].node
        assert own.op_type == "DynamicQuantizeLinear"
        assert readers.get(own.input[0], 0) == 0  # read inside the If only


def test_windows_with_the_calls_own_statistics_are_the_whole_decode(cut, long_whole) -> None:
    # The window plumbing (slices, context, fed statistics and scales) is exact with 6
    # frames of context: what the estimate changes is the statistics alone. The
    # default's shorter context costs less than a listener could hear.
    plan, whole, statistics = long_whole  # one decode: its audio and its statistics
    whole = whole[graph.SAMPLES_PER_FRAME * cut.first_frame(plan) :]
    # Later windows of `later` frames, whatever the clock: one 20 frames long or
    # shorter rounds its float sums unlike the whole call, and the int8 layers grow
    # that to a few % of the peak here and there (see the test of a stopped call).
    default = cut.windows
    try:
        cut.windows = replace(default, context=6, lead_context=6, paced=False)
        windows = [audio for audio, _ in cut.windowed(plan, statistics)]
        cut.windows = replace(default, paced=False)
        joined = np.concatenate([audio for audio, _ in cut.windowed(plan, statistics)])
    finally:
        cut.windows = default
    assert len(windows) >= 3
    assert len(joined) == len(whole)
    assert 10 * np.log10(np.sum(whole**2) / np.sum((joined - whole) ** 2)) > 45
    joined = np.concatenate(windows)
    assert len(joined) == len(whole)
    assert np.abs(joined - whole).max() < 1e-3 * np.abs(whole).max()


def test_windowed_first_calls_sound_close_to_the_whole_call(
    engine, cut, long_whole, listener
) -> None:
    # Measured on 14 sentences: log-mel L1 against the whole decode 2-5 dB with one
    # probe (the whole call's own statistics: 0.7 dB; naive windows 4.7 dB). No seams:
    # every window after the first is decoded with one set of statistics.
    distances, heard = [], []
    other = cut.plan(inputs(engine, SENTENCES[0]))
    # LONG's whole decode is the module's, made once.
    for plan, whole in ((long_whole[0], long_whole[1]), (other, cut.whole(other))):
        start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
        windowed = np.concatenate([audio for audio, _ in cut.windowed(plan)])
        distances.append(log_mel_distance(whole[start:], windowed))
        heard.append((np.clip(windowed, -1, 1) * 32767).astype(np.int16))
    assert max(distances) < 6.0, distances
    # Heard as one clip against the model's own (one judge call, not one each).
    listener.check_later((LONG, SENTENCES[0]), heard)


def test_the_engine_speaks_a_listeners_first_call_in_windows(assets, long_whole, tmp_path) -> None:
    engine = Engine(assets, EngineSettings(threads=THREADS))
    # Where the engine keeps what a frame costs here, read when it was made.
    assert engine.pace is not None and engine.pace.parent == cutting.ready(assets.model)
    voice = engine.voice("jm_kumo")
    calls = engine.plan(LONG, voice, awaited=True)
    assert calls[0].windowed and not any(c.windowed for c in calls[1:])
    # A later piece whose listener's audio runs low: windows too, and no cut; with
    # plenty in hand, one whole call.
    later = engine.plan(LONG, voice, in_hand=0.0)
    assert [c.phonemes for c in later] == [c.phonemes for c in calls] and not later[0].windowed
    # No text cut: the sentence is one call, as it is without a listener.
    assert [c.phonemes for c in calls] == [c.phonemes for c in engine.plan(LONG, voice)]
    # A voice not taught yet speaks whole (see the next test): this one has statistics.
    engine.priors = VoicePriors(tmp_path / "priors", engine.cut.kinds)
    plan, _, statistics = long_whole
    own = engine.cut.plan(engine.inputs(calls[0]))  # this engine plans the call alike
    assert np.array_equal(own[graph.DURATIONS], plan[graph.DURATIONS])
    traits = engine.cut.traits(plan)
    for _ in range(TRUSTED):
        engine.priors.learn("jm_kumo", statistics, traits)
    first = first_size(engine.cut.windows, engine.cut.clock.per_frame())  # 16 frames, 0.4 s,
    pieces = list(engine.stream(calls[0]))  # unless the CPU is slow (then what it needs)
    assert len(pieces) >= 3 and [last for _, last in pieces][-1]
    assert 0 < len(pieces[0][0]) <= graph.SAMPLES_PER_FRAME * first
    # Now that windows were timed here: in windows if a whole call would be late, and
    # whole with plenty in hand (as `choose` says, which the engine decodes by; a
    # worker's later call decoded both ways is the last test here).
    assert not choose(later[0], plan, engine.cut, engine.priors, 0).whole
    plenty = replace(later[0], in_hand=60.0)
    assert choose(plenty, plan, engine.cut, engine.priors, 0).whole
    # What its windows cost is left for the next worker (not in the cache here: other
    # tests' workers write there meanwhile).
    engine.pace = tmp_path / "pace.json"
    engine.keep_learned()
    successor = Clock()
    successor.recall(engine.pace)
    assert successor.per_frame() == engine.cut.clock.per_frame() is not None


def test_a_voice_that_has_spoken_is_windowed_with_what_its_calls_taught(
    assets, long_whole, tmp_path
) -> None:
    # Taught the call's own statistics, the engine's windows are the whole decode: the
    # learned average, not probe rows (2-5 dB away), is what they were decoded with.
    engine = Engine(assets, EngineSettings(threads=THREADS))
    engine.priors = VoicePriors(tmp_path, engine.cut.kinds)
    voice = engine.voice("jm_kumo")
    call = engine.plan(LONG, voice, awaited=True)[0]
    # Before it has statistics, a listener's first call is decoded whole (and teaches):
    # the voice as itself, the same on every request.
    # One piece that taught a call: decoded whole (windows teach nothing).
    first = list(engine.stream(call))
    assert len(first) == 1 and engine.priors.calls("jm_kumo") == 1
    assert engine.priors.wanted() == ["jm_kumo"]  # noted for the teacher
    plan, _, statistics = long_whole  # the same call's, as its whole decode above gave them
    traits = engine.cut.traits(plan)
    for _ in range(TRUSTED - 1):
        engine.priors.learn("jm_kumo", statistics, traits)
    # Paced by this machine's clock: wherever the first window ends, the trim's steps
    # are counted from the call's start, so the call begins and ends where its whole
    # decode does. Once the onset was judged on the first window's own steps (up to 1,056
    # samples off) and the end on the last window's (the last window alone kept 11,336
    # samples of near-silence more).
    windows = [pcm for pcm, _ in engine.stream(call)]
    assert len(windows) >= 3
    whole = first[0][0]  # the call's whole decode, as above
    joined = np.concatenate(windows)
    assert len(joined) == len(whole)
    # Decoded with the call's own statistics, the windows are the whole decode.
    assert log_mel_distance(whole / 32768, joined / 32768) < 0.5
    # Windows teach nothing; a short reply's whole call does: the statistics of short
    # calls are not a sentence's, and they are predicted from their like.
    engine.run(engine.plan("Hi.", voice)[0])
    assert engine.priors.calls("jm_kumo") == TRUSTED + 1


def test_windows_join_sample_to_sample_with_no_fade_at_their_seams(engine, taught) -> None:
    # Only the call's own edges are faded: a fade at every seam was a notch of 8 ms
    # (16 dB) every 1.2 s in the middle of the first sentence.
    from wyoming_kokoro.audio import pause_after, silence, to_pcm16

    voice = engine.voice("jm_kumo")
    call = engine.plan(LONG, voice, awaited=True)[0]
    with recorded_windows(engine.cut) as recorded:  # the windows as the engine got them
        pieces = [pcm for pcm, _ in engine.stream(call)]
    windows = recorded.windows
    assert len(pieces) >= 3
    # The same audio converted in one piece, from where the engine's trim began it
    # (found by matching 2,000 samples past the fade-in).
    streamed = np.concatenate(pieces)
    speech = len(streamed) - len(silence(pause_after(call.phonemes)))
    joined = np.concatenate(windows)
    head = streamed[200:2200].astype(np.float64)
    onset = min(
        range(len(windows[0]) - 2200),
        key=lambda k: float(np.abs(joined[k + 200 : k + 2200] * 32767.0 - head).sum()),
    )
    at_once = to_pcm16(joined[onset : onset + speech])
    streamed = streamed[: len(at_once)]
    assert np.abs(streamed.astype(np.int32) - at_once).max() <= 1


def test_a_graph_that_does_not_split_is_refused(assets, tmp_path) -> None:
    with model_file(assets) as model:
        proto = onnx.load(model)
    for node in proto.graph.node:  # another export's name for the decoder's features
        node.output[:] = ["features" if o == graph.FEATURES else o for o in node.output]
        node.input[:] = ["features" if i == graph.FEATURES else i for i in node.input]
    renamed = tmp_path / "renamed.onnx"
    onnx.save(proto, str(renamed))
    with pytest.raises(graph.GraphError):
        graph.cut(renamed)
    # A model that is not a published file is never cut: it is decoded whole.
    assert cut_dir(renamed) is None
    engine = Engine(Assets(renamed, assets.voices, assets.voice_names, "test"))
    calls = engine.plan(LONG, engine.voice("jm_kumo"), awaited=True)
    assert not any(c.windowed for c in calls)
    assert len(calls) > 1  # the opening phrase is cut off instead
    assert len(engine.plan(LONG, engine.voice("jm_kumo"), in_hand=0.0)) == 1  # never later


def test_the_loader_finds_the_cut_model_itself(assets, cut) -> None:
    loading = ModelLoading(assets, THREADS, find_cut=True)
    loading.result()
    assert loading.cut_dir == cutting.ready(assets.model) is not None
    assert loading.cut_model is not None


def test_a_damaged_voices_file_is_refused_and_the_cut_model_kept(assets, cut, tmp_path) -> None:
    directory = cutting.ready(assets.model)
    assert directory is not None  # cut by the `cut` fixture
    voices = tmp_path / assets.voices.name
    voices.write_bytes(b"not a voices file")
    loading = ModelLoading(replace(assets, voices=voices), THREADS, cut=directory)
    with pytest.raises(AssetError, match="cannot load the voices"):
        loading.result()
    # The voices were at fault, not the cut model: it stays for the next worker.
    assert (directory / VERIFIED).is_file()


def test_a_new_cut_replaces_the_older_one_and_keeps_what_it_learned(tmp_path) -> None:
    rest = "6e742170d309016e-ort1.32.0"
    oldest, older = tmp_path / f"split-{rest}", tmp_path / f"split2-{rest}"
    target = tmp_path / f"split{LAYOUT}-{rest}"
    other_runtime = tmp_path / "split-6e742170d309016e-ort1.31.0"
    for entry in (oldest, older, other_runtime):
        (entry / "priors").mkdir(parents=True)
        (entry / "priors" / "jm_kumo.npz").write_bytes(b"learned")
        (entry / graph.GENERATOR).write_bytes(b"part")
    partial = tmp_path / ".partial"
    partial.mkdir()
    cutting.adopt_learned(partial, target)
    cutting.remove_superseded(target)
    assert not older.exists() and not oldest.exists()
    assert (partial / "priors" / "jm_kumo.npz").read_bytes() == b"learned"
    assert (other_runtime / graph.GENERATOR).exists()  # maybe another installation's


def test_a_call_stopped_between_windows_loses_and_repeats_nothing(taught) -> None:
    # Both runs windowed with the voice's learned statistics: with probe rows instead
    # (a cache that has not heard the voice yet), the probes follow the first window's
    # length, which follows the clock.
    with running_worker() as worker:
        uninterrupted = b"".join(speak(worker, 1, LONG, awaited=True))
        send(worker, Piece(2, LONG, "jm_kumo", 1.0, "en-us", True))
        first = receive_one(worker)
        assert isinstance(first, Audio) and first.window
        send(worker, Preempt(2))  # a newcomer waits: the model is theirs after this window
        windows, answer = [first.pcm], receive_one(worker)
        while isinstance(answer, Audio) and answer.window:
            windows.append(answer.pcm)
            answer = receive_one(worker)
        assert isinstance(answer, Audio) and answer.more and not answer.pcm
        assert len(windows) <= 2, "the call went on past the window in progress"
        newcomer = speak(worker, 3, "The door is open.", awaited=True)
        assert newcomer and newcomer[0]
        # Told with the call that others wait: one window, then the model is theirs.
        send(worker, Next(2, windows=1))
        before, answer = len(windows), receive_one(worker)
        while isinstance(answer, Audio) and answer.window:
            windows.append(answer.pcm)
            answer = receive_one(worker)
        assert isinstance(answer, Audio) and answer.more and not answer.pcm
        assert len(windows) == before + 1, "the call did not stop after the one window asked"
        send(worker, Next(2))
        rest = receive(worker)
        assert isinstance(rest, Audio) and not rest.more
        # A soft Preempt stops nothing that runs (this plan): the call pauses after
        # its first window, which is heard.
        send(worker, Piece(4, LONG, "jm_kumo", 1.0, "en-us", True))
        send(worker, Preempt(4, soft=True))
        window, paused = receive_one(worker), receive_one(worker)
        assert isinstance(window, Audio) and window.window and window.pcm
        assert isinstance(paused, Audio) and paused.more and not paused.pcm and not paused.window
        send(worker, Drop(4))
        # The windows' sizes follow the clock, so the rest may be cut elsewhere than in
        # the run without a stop, and the waveforms differ where they were cut
        # differently: a generator input up to 32 frames long rounds its float sums a
        # little differently from a longer one, an int8 activation then falls on the
        # other side of a step, and the int8 layers after it grow that to as much as
        # 6 % of the peak in a loud moment. What a listener hears stays the same: any
        # frame of the log-mel within 1.3 dB (re-cut windows measured), while a stretch
        # of 0.05 s lost or said twice is 12 dB or more there.
        resumed = np.frombuffer(b"".join([*windows, rest.pcm]), np.int16) / 32768.0
        alone = np.frombuffer(uninterrupted, np.int16) / 32768.0
        assert abs(len(resumed) - len(alone)) < graph.SAMPLES_PER_FRAME // 4
        assert log_mel_frames(alone, resumed).max() < 4.0


def test_a_window_in_progress_is_stopped_for_a_newcomer_and_decoded_again(engine, taught) -> None:
    """A window after the first stops at once (no newcomer waits for it to end); the
    call then goes on from that window, and its audio is what it would have been."""
    split = engine.cut
    assert split is not None
    call = engine.plan(LONG, engine.voice("jm_kumo"), lang="en-us", awaited=True)[0]
    kept = split.windows
    split.windows = replace(kept, paced=False)  # windows of `later` frames: the same cuts
    try:
        uninterrupted = [pcm for pcm, _ in engine.stream(call, "alone")]

        stopped_running: list[bool] = []

        def newcomer() -> None:
            deadline = time.monotonic() + 30
            while split.window_switch.current_tag != "stopped":  # a later window runs
                if time.monotonic() > deadline:
                    return
                time.sleep(0.001)
            # True only if the run in progress was stopped (not one to come).
            stopped_running.append(split.window_switch.interrupt("stopped"))
            engine.let_others_go("stopped")

        helper = threading.Thread(target=newcomer)
        heard, paused = [], 0
        for count, (pcm, _) in enumerate(engine.stream(call, "stopped")):
            if count == 0:
                helper.start()  # after the first window, which is never stopped
            if not len(pcm):
                paused += 1
                assert engine.yield_to_others("stopped")  # others have the model now
            heard.append(pcm)
        helper.join()
    finally:
        split.windows = kept
    assert paused == 1 and stopped_running == [True]
    assert split.window_switch.pending_tag is None  # no stop left for the next call
    # Windows of `later` frames: the stopped one is decoded again as it was.
    assert np.array_equal(np.concatenate(heard), np.concatenate(uninterrupted))


def test_a_pieces_later_call_is_decoded_in_windows_only_if_it_would_be_late(cut) -> None:
    # A sentence longer than a call is spoken in two: its second call can come late as
    # well as its first, so each Next says how much audio the listener has in hand.
    with running_worker(max_call_tokens=50) as worker:
        for job_id, in_hand, windowed in ((1, 0.0, True), (2, 60.0, False)):
            send(worker, Piece(job_id, LONG, "jm_kumo", 1.0, "en-us"))
            first = receive(worker)  # a whole call: it also times a frame here
            assert isinstance(first, Audio) and first.more and first.pcm
            send(worker, Next(job_id, in_hand=in_hand))
            windows, answer = 0, receive_one(worker)
            while isinstance(answer, Audio) and answer.window:
                windows, answer = windows + 1, receive_one(worker)
            assert isinstance(answer, Audio) and answer.pcm
            assert (windows > 0) == windowed, (in_hand, windows)
            while answer.more:  # the rest of the sentence (one call or more)
                send(worker, Next(job_id))
                answer = receive(worker)
                assert isinstance(answer, Audio) and answer.pcm
