"""A voice taught in the run's cache before a worker starts, as its whole calls teach it.

A worker decodes a listener's call in windows only once the voice has taught enough
whole calls. Speaking those calls through the worker first costs a decode each; the
same statistics learned here cost one decode per distinct text.
"""

from __future__ import annotations

from typing import Any

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.synthesis import split
from wyoming_kokoro.synthesis.prior import VoicePriors


def teach(engine: Any, texts: tuple[str, ...], times: int, voice: str = "jm_kumo") -> VoicePriors:
    """Each text's whole decode learned `times` times in the run cache's priors for
    `voice` (where a worker started next reads them); the priors, saved."""
    cut = engine._split
    directory = split.ready(resolve(None, None, []).model)
    assert cut is not None and directory is not None, "the cut model is missing"
    priors = VoicePriors(directory / "priors", cut.kinds, lambda v: engine._style(engine.voice(v)))
    for text in texts:
        plan = cut.plan(engine._inputs(engine.plan(text, engine.voice(voice))[0]))
        statistics, traits = cut.statistics(plan), cut.traits(plan)
        for _ in range(times):
            priors.learn(voice, statistics, traits)
    priors.flush()
    return priors
