"""A voice taught in the run's cache before a worker starts, as its whole calls teach it.

A worker decodes a listener's call in windows only once the voice has taught enough
whole calls. Speaking those calls through the worker first costs a decode each; the
same statistics learned here cost one decode per distinct text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from support.cores import THREADS
from support.run_cache import linked, shared
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting
from wyoming_kokoro.synthesis.prior import VoicePriors

# Whole sentences, as a worker's whole calls teach them (each decoded once).
SENTENCES = (
    "The washing machine has finished, and the dryer will be done in ten minutes.",
    "Good morning! The weather today is sunny with a high of twenty four degrees.",
    "Please remember to water the plants in the garden this evening.",
)


def taught_in_run(engine: Any) -> None:
    """jm_kumo taught SENTENCES in the run's cache, three times each, once per run
    (whichever test process asks first): workers started after decode in windows.
    Then frozen, as the model cut freezes the server's voice: the other test processes'
    whole calls would otherwise go on teaching it, and a test decoding the same windows
    twice could get other statistics the second time."""

    def taught(directory: Path) -> Path:
        teach(engine, SENTENCES, 3).mark_taught("jm_kumo")
        return directory

    shared("sentences-taught", taught)


def teach(engine: Any, texts: tuple[str, ...], times: int, voice: str = "jm_kumo") -> VoicePriors:
    """Each text's whole decode learned `times` times in the run cache's priors for
    `voice` (where a worker started next reads them); the priors, saved."""
    cut = engine.cut
    directory = cutting.ready(resolve(None, None, []).model)
    assert cut is not None and directory is not None, "the cut model is missing"
    priors = VoicePriors(directory / "priors", cut.kinds, lambda v: engine.style(engine.voice(v)))
    for text in texts:
        plan = cut.plan(engine.inputs(engine.plan(text, engine.voice(voice))[0]))
        statistics, traits = cut.statistics(plan), cut.traits(plan)
        for _ in range(times):
            priors.learn(voice, statistics, traits)
    priors.flush()
    return priors


def taught_cache(target: Path, voice: str = "jm_kumo") -> Path:
    """A cache like the run's, of its own, where `voice` is taught as the teacher
    teaches it (short replies only: enough calls, and quick) and so frozen: a
    listener's first call in it is decoded in windows with the voice's statistics,
    whatever other tests taught the run's cache. Point a server at it with
    KOKORO_CACHE_DIR."""
    import pytest

    from wyoming_kokoro.synthesis import teaching
    from wyoming_kokoro.synthesis.engine import Engine

    mine = linked(Path(os.environ["KOKORO_CACHE_DIR"]), target)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KOKORO_CACHE_DIR", str(mine))
        engine = Engine(resolve(None, None, []), EngineSettings(threads=THREADS))
        teaching.teach(engine, voice, sentences=(), replies=teaching.REPLIES[:8])
        assert engine.priors is not None and engine.priors.taught(voice)
    return mine
