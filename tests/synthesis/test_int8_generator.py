"""A cut whose mark chose the int8 generator (`generator_choice.py`) for this CPU: a
worker loads it, its windows fed the whole call's statistics are the whole decode, and
a real server speaks with it what the judge hears. The entry is the run's cut, linked,
with the int8 generator made as the cut makes it and a mark that chose it here (this
CPU's own choice may keep today's: its kernels decide)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from support.cores import THREADS
from support.run_cache import unlearned
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.catalog.cut import cut_dir, mark_verified
from wyoming_kokoro.catalog.files import MODEL_FILES
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting, generator_choice, graph, quantizing
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.generator_choice import CHOSEN, INT8
from wyoming_kokoro.synthesis.int8_ranges import chosen_ranges
from wyoming_kokoro.synthesis.loading import load_cut
from wyoming_kokoro.synthesis.runtime import cpu_key

pytestmark = pytest.mark.model

SENTENCE = "The porch light turns off at midnight, and the gate stays locked."
MODEL = MODEL_FILES["int8"].name


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache like the run's whose cut entry holds the int8 generator, chosen here."""
    cache = unlearned(tmp_path_factory.mktemp("int8") / "cache")
    entry = cut_dir(cache / MODEL, cache)
    assert entry is not None and (entry / graph.GENERATOR).exists()
    ranges = chosen_ranges(MODEL)
    assert ranges, "int8_ranges.py lists no convolution for the int8 model"
    model = onnx.load(str(entry / graph.GENERATOR))
    onnx.save(quantizing.rewrite(model, ranges, generator_choice.weight_bits()), str(entry / INT8))
    # Written over the link to the run's mark, not into it (os.replace).
    mark_verified(entry, (*graph.PARTS, INT8), f"test\n{CHOSEN} {cpu_key()}")
    return cache


def test_windows_of_the_int8_generator_are_its_whole_decode(cache, caplog) -> None:
    entry = cut_dir(cache / MODEL, cache)
    assert entry is not None
    with caplog.at_level(logging.INFO):
        cut = CutModel(load_cut(entry, THREADS))
    assert "runs on int8 kernels" in caplog.text
    nodes = onnx.load(str(entry / INT8)).graph.node
    assert sum(n.op_type == "QLinearConv" for n in nodes) == len(chosen_ranges(MODEL))
    engine = Engine(resolve(None, None, []), EngineSettings(threads=THREADS, decode="whole"))
    (call,) = engine.plan(SENTENCE, engine.voice("jm_kumo"))
    plan = cut.plan(engine.inputs(call))
    whole, statistics = cut.decode(plan)
    whole = whole[graph.SAMPLES_PER_FRAME * cut.first_frame(plan) :]
    # Fixed ranges need no feeding; the statistics and the layers left on today's
    # path are fed as before, and with 6 frames of context windows are exact.
    cut.windows = replace(cut.windows, context=6, lead_context=6, paced=False)
    windows = [audio for audio, _ in cut.windowed(plan, statistics)]
    joined = np.concatenate(windows)
    assert len(windows) >= 2 and len(joined) == len(whole)
    assert 10 * np.log10(np.sum(whole**2) / np.sum((joined - whole) ** 2)) > 40


@pytest.mark.timeout(240, func_only=True)
def test_a_server_on_the_int8_generator_speaks_what_the_judge_hears(cache, listener) -> None:
    env = {"KOKORO_CACHE_DIR": str(cache)}
    with ServerProcess("--idle-timeout", "5", "--no-teaching", env=env) as srv:
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == []
        log = "".join(srv.log)
    assert "runs on int8 kernels" in log, log
    listener.check_later(SENTENCE, reply.audio)


def test_the_cuts_trial_keeps_the_int8_generator_only_if_chosen(
    tmp_path, monkeypatch, caplog
) -> None:
    """The trial as a cut runs it where the CPU may gain (VNNI, or not x86), on the run's
    parts: it makes the int8 generator, decodes the samples with both, and keeps the
    file exactly when it says it was chosen, on this CPU."""
    entry = cut_dir(Path(resolve(None, None, []).model), None)
    assert entry is not None
    for part in graph.PARTS:
        (tmp_path / part).symlink_to(entry / part)
    monkeypatch.setattr(generator_choice, "worth_trying", lambda: True)
    # One of the cut's samples: the trial's steps are the same, at a third of the CPU.
    styles = cutting._styles(resolve(None, None, []))
    inputs = generator_choice.samples(styles, cutting.VOCABULARY)[:1]
    with caplog.at_level(logging.INFO, logger=generator_choice.__name__):
        chosen = generator_choice.make_and_choose(MODEL, tmp_path, THREADS, inputs)
    assert "the int8 one took" in caplog.text, caplog.text  # tried to the end
    assert (tmp_path / INT8).exists() == (chosen is not None)
    assert chosen in (None, f"{CHOSEN} {cpu_key()}")
