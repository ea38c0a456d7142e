"""Scenarios C1-C4: the cold path, the model load, the first phrase, and wyoming-bench.

C1 cold_start    one short sentence over Wyoming: cold (after the idle unload) vs warm
C2 model_load    a fresh process until the engine is ready: .onnx vs the optimized copy
C3 first_phrase  the opening phrase as its own call: first-call time, WER, seams
C4 wyoming_bench the third-party benchmark's 4 texts, both modes, against our server
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np
import seams
import texts
from client import VOICE, Server, request
from scenarios_core import LANG, kokoro_onnx, load_engine
from support.server_process import children

Result = dict[str, Any]
DOOR = "Someone is at the front door."


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _create_time(text: str, reps: int) -> float:
    """Median seconds of one kokoro-onnx `create()` of `text` (model loaded, warm)."""
    times = []
    kokoro = kokoro_onnx()
    for _ in range(reps):
        started = time.monotonic()
        kokoro.create(text, voice=VOICE, lang=LANG)
        times.append(time.monotonic() - started)
    return _median(times)


def cold_start(quick: bool) -> Result:
    """C1: first audio of one short sentence, cold vs warm, both HA call styles."""
    rounds = 2 if quick else 9
    runs: dict[str, list[float]] = {}
    silent: dict[str, list[float]] = {}  # inside the sentence, after its first audio
    loads: list[float] = []
    for variant, args in (("", ()), ("prefork_", ("--prefork",))):
        with Server("--idle-timeout", "1", *args) as server:

            def unloaded(server: Server = server, forked: bool = bool(args)) -> bool:
                # --prefork: the waiting parent stays; its forked worker must be gone.
                if forked:
                    return all(children(pid) == [] for pid in server.workers())
                return server.workers() == []

            for _ in range(rounds):
                for mode in ("synth", "stream"):
                    assert server.wait_for(unloaded, 30)
                    cold = asyncio.run(request(server.uri, DOOR, mode == "stream"))
                    warm = asyncio.run(request(server.uri, DOOR, mode == "stream"))
                    for kind, heard in (("cold", cold), ("warm", warm)):
                        key = f"{variant}{kind}_{mode}"
                        runs.setdefault(key, []).append(heard.first_audio or float("nan"))
                        silent.setdefault(key, []).append(heard.silent)
            for line in server.log:
                if "Model loaded in" in line and not variant:
                    loads.append(float(line.split("Model loaded in")[1].split()[0]))
    # Cold minus the warm request right after it, per round: this machine's speed
    # drifts by 30 % between minutes, which a difference of medians would carry.
    deltas = {
        f"{variant}delta_{mode}": _median(
            [
                cold - warm
                for cold, warm in zip(
                    runs[f"{variant}cold_{mode}"], runs[f"{variant}warm_{mode}"], strict=True
                )
            ]
        )
        for variant in ("", "prefork_")
        for mode in ("synth", "stream")
    }
    return {
        "text": DOOR,
        "rounds": rounds,
        **{key: _median(values) for key, values in runs.items()},
        **deltas,
        "all": runs,
        "silent": {key: max(values) for key, values in silent.items()},
        "engine_ready_s": _median(loads),
        "kokoro_create": _create_time(DOOR, 5),
    }


_LOAD_PROBE = """
import json, sys, time
began = time.monotonic()
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.engine import Engine
imported = time.monotonic()
engine = Engine(resolve(None, None, []), EngineSettings(optimized_copy=sys.argv[1] == "copy"))
ready = time.monotonic()
list(engine.speak("Someone is at the front door.", engine.voice("jm_kumo"), lang="en-us"))
print(json.dumps({"imports": imported - began, "engine": ready - imported,
                  "first_call": time.monotonic() - ready}))
"""


def model_load(quick: bool) -> Result:
    """C2: a fresh Python process until the engine is ready, then its first call."""
    rounds = 3 if quick else 7
    found: dict[str, list[dict[str, float]]] = {"onnx": [], "copy": []}
    for _ in range(rounds):
        for variant in found:  # alternate, so load drifts hit both alike
            out = subprocess.run(
                [sys.executable, "-c", _LOAD_PROBE, variant],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            found[variant].append(json.loads(out.splitlines()[-1]))
    return {
        variant: {key: _median([r[key] for r in rows]) for key in rows[0]}
        for variant, rows in found.items()
    } | {"rounds": rounds}


def first_phrase(quick: bool) -> Result:
    """C3: what speaking the opening phrase alone costs and gains, on held-out sentences.

    Also the silence a listener hears inside the sentence when a call after the
    head takes longer than the audio in hand ("underrun"), against the previous
    behaviour: one cut, the rest of the sentence in one call.
    """
    from support.judge import judge, wer

    from wyoming_kokoro.text.phrases import first_phrase as head_cut

    engine = load_engine("whole")  # phrase cuts are how whole calls start early
    spec = engine.voice(VOICE)
    recognizer = judge()  # Whisper base (tests/support/judge.py); RESULTS.md's C3 predates it
    sets = [("phrase", s) for s in texts.HELD_OUT] + [
        ("subject", s) for s in texts.HELD_OUT_SUBJECT
    ]
    if quick:
        sets = sets[:4] + sets[-2:]
    rows = []
    for kind, sentence in sets:
        quick_calls = engine.plan(sentence, spec, lang=LANG, awaited=True)
        whole_calls = engine.plan(sentence, spec, lang=LANG)
        cut = head_cut(sentence)
        before = whole_calls
        if kind == "phrase" and cut is not None:
            before = [c for part in cut for c in engine.plan(part, spec, lang=LANG)]
        times: dict[str, list[float]] = {"quick": [], "whole": []}
        for _ in range(3):
            for key, calls in (("quick", quick_calls), ("whole", whole_calls)):
                started = time.monotonic()
                engine.run(calls[0])
                times[key].append(time.monotonic() - started)
        quick_audio, quick_underrun = _timed(engine, quick_calls)
        _, before_underrun = _timed(engine, before)
        whole_audio = np.concatenate([engine.run(call) for call in whole_calls])
        row = {
            "text": sentence,
            "set": kind,
            "cut": len(quick_calls) > len(whole_calls),
            "calls": len(quick_calls),
            "first_call_quick": _median(times["quick"]),
            "first_call_whole": _median(times["whole"]),
            "underrun": quick_underrun,
            "underrun_before": before_underrun,
            "wer_quick": wer(sentence, recognizer.transcribe(np.concatenate(quick_audio))),
            "wer_whole": wer(sentence, recognizer.transcribe(whole_audio)),
        }
        if row["cut"]:
            row["seam"] = seams.jump(quick_audio[0], quick_audio[1])
        row["word_gaps"] = seams.gap_jumps(whole_audio)
        rows.append(row)
    return {"rows": rows}


def _timed(engine: Any, calls: list[Any]) -> tuple[list[np.ndarray], float]:
    """The calls' audio, and the silence heard when it is played from the first
    call's end while the next calls run back to back."""
    audio: list[np.ndarray] = []
    clock = played_until = 0.0
    silence = 0.0
    for call in calls:
        started = time.monotonic()
        audio.append(engine.run(call))
        clock += time.monotonic() - started
        seconds = len(audio[-1]) / 24_000
        if len(audio) > 1 and clock > played_until:
            silence += clock - played_until
        played_until = max(played_until, clock) + seconds
    return audio, silence


def wyoming_bench(quick: bool) -> Result:
    """C4: wyoming-bench's default texts, both modes, 5 rounds, against a warm server."""
    from wyoming.tts import SynthesizeVoice
    from wyoming_bench.tts.bench import bench_server
    from wyoming_bench.tts.texts import DEFAULT_TEXTS

    rounds = 2 if quick else 5
    # This VM's speed drifts by up to a quarter between minutes: kokoro-onnx on one
    # sentence before, between and after the two runs shows how it moved.
    probes = [_create_time(DOOR, 3)]
    with Server("--idle-timeout", "600") as server:
        port = server.port
        asyncio.run(request(server.uri, DOOR, False))  # the worker is loaded: "warm"
        measured = asyncio.run(
            bench_server(
                "127.0.0.1",
                port,
                list(DEFAULT_TEXTS),
                ["non_streaming", "streaming"],
                SynthesizeVoice(name=VOICE),
                None,
                rounds,
                1,
                False,
                0.0,
                10.0,
                120.0,
                unique=True,
            )
        )
        probes.append(_create_time(DOOR, 3))
        paired, paired_first = asyncio.run(_paired_totals(port, list(DEFAULT_TEXTS), rounds))
        probes.append(_create_time(DOOR, 3))
    modes: Result = {}
    for mode in ("non_streaming", "streaming"):
        ok = [m for m in measured if m.mode == mode and m.ok]
        first = sorted(m.ttft_s for m in ok)
        modes[mode] = {
            "n": len(ok),
            "errors": sum(m.mode == mode and not m.ok for m in measured),
            "first_mean": statistics.fmean(first),
            "first_p95": first[max(0, round(0.95 * len(first)) - 1)],
            "total_mean": statistics.fmean(m.total_s for m in ok),
            "audio_mean": statistics.fmean(m.audio_duration_s for m in ok),
            "by_text": {
                text[:40]: statistics.fmean(m.ttft_s for m in ok if m.text.startswith(text))
                for text in DEFAULT_TEXTS
            },
        }
    create = [_create_time(text, 3) for text in DEFAULT_TEXTS]
    return {
        "rounds": rounds,
        "modes": modes,
        "kokoro_create_mean": statistics.fmean(create),
        "paired_total_ratio": _median(paired),
        "paired_ratios": paired,
        "paired_first_mean": {mode: statistics.fmean(v) for mode, v in paired_first.items()},
        "speed_probes": probes,
    }


async def _paired_totals(
    port: int, texts: list[str], rounds: int
) -> tuple[list[float], dict[str, list[float]]]:
    """Streaming total / `synthesize` total, per text and round, the two run back to back
    (and each mode's first audio in those runs).

    wyoming-bench runs every `synthesize` round before every streaming one, so a
    drift in this VM's speed between those minutes shows up as a gap between the
    modes. Measured alternately (order swapped each round), the drift cancels.
    """
    from wyoming.tts import SynthesizeVoice
    from wyoming_bench.tts.client import measure_once

    ratios = []
    first: dict[str, list[float]] = {"non_streaming": [], "streaming": []}
    for number in range(rounds):
        for text in texts:
            order = ("non_streaming", "streaming")[:: 1 if number % 2 == 0 else -1]
            total = {}
            for mode in order:
                m = await measure_once(
                    "127.0.0.1", port, mode, text, SynthesizeVoice(name=VOICE), None, 10.0, 120.0
                )
                assert m.ok, m.error
                total[mode] = m.total_s
                first[mode].append(m.ttft_s)
            ratios.append(total["streaming"] / total["non_streaming"])
    return ratios, first


SCENARIOS = {
    "cold_start": cold_start,
    "model_load": model_load,
    "first_phrase": first_phrase,
    "wyoming_bench": wyoming_bench,
}
