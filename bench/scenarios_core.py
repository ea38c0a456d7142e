"""Scenarios A1-A4: our synthesis core against kokoro-onnx, in one process each."""

from __future__ import annotations

import asyncio
import functools
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import texts
from procs import mark

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.cpus import automatic_threads
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.text.pieces import split_text

VOICE = "jm_kumo"
LANG = "en-us"
RATE = 24000
BOUNDED_SECONDS = 2.5  # A3 with long calls decoded in windows of at most this, for memory
Result = dict[str, Any]


def peak_rss_mb() -> float:
    """This process's peak RSS as the kernel counted it (cross-check for the polling)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_engine(decode: str = "windows", max_decode_seconds: float = 0.0) -> Engine:
    options = EngineSettings(
        threads=automatic_threads(), decode=decode, max_decode_seconds=max_decode_seconds
    )
    engine = Engine(resolve(None, None, []), options)
    engine.warm_up()
    return engine


@functools.cache
def kokoro_onnx() -> Any:
    """kokoro-onnx itself on the whole model file: the baseline of every ratio.

    Never the engine's own `Kokoro`, which holds only the cut model's first part when
    the engine decodes through the cut model.
    """
    from kokoro_onnx import Kokoro

    from wyoming_kokoro.catalog.assets import prepare_model

    assets = resolve(None, None, [])
    kokoro = Kokoro(str(prepare_model(assets)), str(assets.voices))
    kokoro.create("Ready.", voice=VOICE, lang=LANG)  # its first call pays allocations
    return kokoro


def ours(engine: Engine, text: str) -> tuple[float, float]:
    """The core as the worker runs it: split_text, then speak every piece.

    Returns (wall seconds, audio seconds).
    """
    spec = engine.voice(VOICE)
    samples = 0
    started = time.monotonic()
    for piece in split_text(text):
        for pcm in engine.speak(piece, spec, 1.0, LANG):
            samples += len(pcm)
    return time.monotonic() - started, samples / RATE


def baseline(engine: Engine, text: str) -> tuple[float, float]:
    """One kokoro-onnx `create()` call, on kokoro-onnx's own session."""
    kokoro = kokoro_onnx()
    started = time.monotonic()
    audio, rate = kokoro.create(text, voice=VOICE, lang=LANG)
    return time.monotonic() - started, len(audio) / rate


def core_rtf(quick: bool) -> Result:
    """A1: real-time factor on ~600 characters, ours vs kokoro-onnx create()."""
    engine = load_engine()
    runs: dict[str, list[tuple[float, float]]] = {"ours": [], "kokoro": []}
    for rep in range(1 if quick else 5):
        order = [("ours", ours), ("kokoro", baseline)]
        for name, run in order if rep % 2 == 0 else order[::-1]:
            runs[name].append(run(engine, texts.ENGLISH_600))
    result: Result = {"chars": len(texts.ENGLISH_600), "reps": len(runs["ours"])}
    for name, values in runs.items():
        result[f"{name}_rtf"] = statistics.median(wall / audio for wall, audio in values)
        result[f"{name}_best_rtf"] = min(wall / audio for wall, audio in values)
        result[f"{name}_wall"] = statistics.median(wall for wall, _ in values)
        result[f"{name}_audio"] = values[0][1]
    return result


def first_ours(engine: Engine, text: str) -> tuple[float, float]:
    """Seconds until the core yields its first audio (split_text included), its length."""
    spec = engine.voice(VOICE)
    started = time.monotonic()
    speech = engine.speak(split_text(text)[0], spec, 1.0, LANG)
    pcm = next(speech)
    elapsed = time.monotonic() - started
    speech.close()
    return elapsed, len(pcm) / RATE


def first_kokoro(engine: Engine, text: str) -> tuple[float, float]:
    """Seconds until kokoro-onnx `create_stream` yields its first batch, its length."""

    kokoro = kokoro_onnx()

    async def first() -> tuple[float, float]:
        started = time.monotonic()
        stream = kokoro.create_stream(text, voice=VOICE, lang=LANG)
        audio, rate = await anext(stream)
        elapsed = time.monotonic() - started
        await stream.aclose()
        return elapsed, len(audio) / rate

    # asyncio.run waits for the executor thread still making the next batch,
    # so it cannot slow down the measurement after this one.
    return asyncio.run(first())


def core_ttfa(quick: bool) -> Result:
    """A2 (+ the core side of B6): time to first audio, ours vs create_stream."""
    engine = load_engine()
    result: Result = {}
    for label, text in (("short", texts.SHORT), ("long", texts.ANSWER_1500)):
        for name, run in (("ours", first_ours), ("kokoro", first_kokoro)):
            values = [run(engine, text) for _ in range(1 if quick else 3)]
            result[f"{name}_{label}"] = statistics.median(v[0] for v in values)
            result[f"{name}_{label}_first_audio_s"] = values[0][1]
        result[f"{label}_chars"] = len(text)
    return result


def core_rss_ours(quick: bool, max_decode_seconds: float = 0.0) -> Result:
    """A3: whole-process RSS while the core speaks a very long text."""
    chars = 3000 if quick else 20000
    text = texts.long_text(chars)
    engine = load_engine(max_decode_seconds=max_decode_seconds)
    mark("loaded")
    wall, audio = ours(engine, text)
    mark("done")
    return {
        "chars": len(text),
        "pieces": len(split_text(text)),
        "audio_s": audio,
        "wall_s": wall,
        "rtf": wall / audio,
        "ru_maxrss_mb": peak_rss_mb(),
    }


def core_rss_bounded(quick: bool) -> Result:
    """A3 with `--max-decode-seconds 2.5`: long calls decoded in windows, for memory."""
    return {**core_rss_ours(quick, BOUNDED_SECONDS), "max_decode_seconds": BOUNDED_SECONDS}


def core_rss_kokoro(quick: bool) -> Result:
    """A3 baseline: one stock kokoro-onnx create() on ~13 s of speech."""
    import onnxruntime as ort
    from kokoro_onnx import Kokoro

    from wyoming_kokoro.catalog.assets import prepare_model

    assets = resolve(None, None, [])
    options = ort.SessionOptions()  # kokoro-onnx's defaults, only the thread count set
    options.intra_op_num_threads = automatic_threads()
    session = ort.InferenceSession(
        str(prepare_model(assets)), sess_options=options, providers=["CPUExecutionProvider"]
    )
    kokoro = Kokoro.from_session(session, str(assets.voices))
    kokoro.create("Ready.", voice=VOICE, lang=LANG)  # the same warm-up as ours
    mark("loaded")
    started = time.monotonic()
    audio, rate = kokoro.create(texts.PASSAGE_13S, voice=VOICE, lang=LANG)
    wall = time.monotonic() - started
    mark("done")
    return {
        "chars": len(texts.PASSAGE_13S),
        "audio_s": len(audio) / rate,
        "wall_s": wall,
        "ru_maxrss_mb": peak_rss_mb(),
    }


def _per_1000(func: Callable[[str], object], text: str) -> float:
    """Milliseconds per 1,000 characters, averaged over at least 1 s of calls."""
    func(text)  # imports, compiled patterns
    calls, started = 0, time.monotonic()
    while calls < 3 or time.monotonic() - started < 1.0:
        func(text)
        calls += 1
    return (time.monotonic() - started) / calls * 1000 / (len(text) / 1000)


def text_cost(quick: bool) -> Result:
    """A4: normalization and sentence splitting, per 1,000 characters."""
    from wyoming_kokoro.text.normalize import normalize

    result: Result = {}
    for label, text in (("answer", texts.ANSWER_1500), ("long", texts.long_text(20000))):
        result[f"{label}_chars"] = len(text)
        result[f"{label}_normalize_ms"] = _per_1000(lambda t: normalize(t, LANG), text)
        result[f"{label}_split_ms"] = _per_1000(split_text, text)
    return result


SCENARIOS: dict[str, Callable[[bool], Result]] = {
    "core_rtf": core_rtf,
    "core_ttfa": core_ttfa,
    "core_rss_ours": core_rss_ours,
    "core_rss_bounded": core_rss_bounded,
    "core_rss_kokoro": core_rss_kokoro,
    "text_cost": text_cost,
}
