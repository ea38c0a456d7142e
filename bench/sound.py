"""V: every voice sounds like itself on every request, judged by PESQ wide-band.

    .venv/bin/python bench/sound.py [--sentences N] [--voices V ...] [--taught-in ja]

For every embedded voice and a blend, in a cache of the run's own (nothing taught):
the first request's first sentence before the voice is taught (what a listener gets
meanwhile, against the whole decode), the time to teach it (`teaching.teach`), then
held-out sentences as a listener's first call (windows) against the same call
decoded whole, and the same request twice: PESQ-WB (ITU-T P.862.2, `pesq`) after
trimming, loudness matching and alignment, integrated loudness of each request
(BS.1770, pyloudnorm), how many requests came back bit-identical, the model's own
variation for the voice (each sentence decoded whole after the next one in one
generator run, against it decoded alone), and DNSMOS
(`speechmos`, no reference) of the windows and of the whole decode. `--taught-in ja`
teaches with Japanese sentences instead of the English ones, for comparison.
Public API of the package only. Prints one markdown table and the load it saw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.run_cache import remove, use_run_cache
from texts import HELD_OUT_JA, SENTENCES_JA
from windows import after_another

from wyoming_kokoro.audio import to_pcm16
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import graph, teaching
from wyoming_kokoro.synthesis.engine import Engine

BLEND = "jf_gongitsune(1)+jm_kumo(1)"
RATE = 24_000
REPLIES_JA = ("はい。", "わかりました。", "電気を消しました。", "おはようございます。")


def to_16k(pcm: np.ndarray) -> np.ndarray:
    import soxr

    return soxr.resample(pcm.astype(np.float32) / 32768, RATE, 16_000)


def trimmed(audio: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    loud = np.flatnonzero(np.abs(audio) > floor)
    return audio[loud[0] : loud[-1] + 1] if len(loud) else audio


def aligned(ref: np.ndarray, deg: np.ndarray, most: int = 800) -> tuple[np.ndarray, np.ndarray]:
    """`deg` shifted to `ref` by the lag of their best correlation (within 50 ms),
    matched in RMS, both cut to the common length."""
    n = min(len(ref), len(deg))
    corr = np.correlate(ref[:n], np.pad(deg[:n], most), mode="valid")
    lag = int(np.argmax(corr)) - most
    deg = deg[max(0, -lag) :] if lag <= 0 else np.concatenate([np.zeros(lag), deg])
    n = min(len(ref), len(deg))
    ref, deg = ref[:n], deg[:n]
    gain = np.sqrt(np.mean(ref**2) / max(np.mean(deg**2), 1e-12))
    return ref, deg * gain


def pesq_wb(ref_pcm: np.ndarray, deg_pcm: np.ndarray) -> float:
    """PESQ-WB of `deg_pcm` against `ref_pcm` (int16, 24 kHz)."""
    from pesq import pesq

    ref, deg = aligned(trimmed(to_16k(ref_pcm)), trimmed(to_16k(deg_pcm)))
    return float(pesq(16_000, ref, deg, "wb"))


def loudness(pcm: np.ndarray) -> float:
    import pyloudnorm

    audio = pcm.astype(np.float64) / 32768
    if len(audio) < RATE // 2:  # the meter needs 0.4 s blocks
        audio = np.pad(audio, (0, RATE // 2 - len(audio)))
    return float(pyloudnorm.Meter(RATE).integrated_loudness(audio))


def dnsmos(pcm: np.ndarray) -> float:
    from speechmos import dnsmos as model

    # Resampling can overshoot full scale by a hair; the model refuses anything past it.
    return float(model.run(np.clip(to_16k(pcm), -1.0, 1.0), 16_000)["ovrl_mos"])


def first_request(engine: Engine, text: str, voice: str) -> tuple[np.ndarray, float]:
    """A listener's first call (the first sentence of a request) and its first audio."""
    call = engine.plan(text, engine.voice(voice), awaited=True)[0]
    started, first, pieces = time.perf_counter(), None, []
    for pcm, _ in engine.stream(call):
        if first is None and len(pcm):
            first = time.perf_counter() - started
        pieces.append(pcm)
    return np.concatenate(pieces), first or 0.0


def whole(engine: Engine, text: str, voice: str) -> np.ndarray:
    return engine.run(engine.plan(text, engine.voice(voice))[0])


def in_context(engine: Engine, text: str, before: str, voice: str) -> float:
    """The model's own variation for this voice: `text` decoded whole after `before` in
    one generator run, against `text` decoded whole alone (PESQ-WB). Windows that
    come this close sound as the whole decode does."""
    cut = engine.cut
    assert cut is not None
    spec = engine.voice(voice)
    plan, other = (cut.plan(engine.inputs(engine.plan(t, spec)[0])) for t in (text, before))
    start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
    alone = cut.whole(plan)
    after = cut.whole(after_another(other, plan))[-len(alone) :]
    return pesq_wb(to_pcm16(alone[start:]), to_pcm16(after[start:]))


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--voices", nargs="*")
    parser.add_argument("--taught-in", choices=("en", "ja"), default="en")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    run = use_run_cache()
    try:
        measure(args)
    finally:
        if run is not None:
            remove(run)


def measure(args: argparse.Namespace) -> None:
    print(f"load before: {load()}", flush=True)
    engine = Engine(resolve(None, None, []), EngineSettings(threads=args.threads))
    engine.warm_up()
    voices = args.voices or [*engine.voice_names[:5], BLEND]
    held_out = HELD_OUT_JA[: args.sentences]
    head = (
        "| voice | untaught first call vs whole, PESQ | its first audio, s | to teach, s "
        "| taught first audio, s median "
        "| windows vs whole, PESQ mean / worst "
        "| the model's own: whole after another sentence, PESQ mean / worst "
        "| same request twice, PESQ worst "
        "| bit-identical | loudness between the two, LU max | DNSMOS windows / whole |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for voice in voices:
        untaught, untaught_first = first_request(engine, held_out[0], voice)
        before = pesq_wb(whole(engine, held_out[0], voice), untaught)
        started = time.perf_counter()
        if args.taught_in == "ja":
            teaching.teach(engine, voice, SENTENCES_JA, REPLIES_JA)
        else:
            teaching.teach(engine, voice)
        taught_in = time.perf_counter() - started
        versus, twice, loud, same, mos_w, mos_h, firsts = [], [], [], 0, [], [], []
        own = [
            in_context(engine, text, before, voice)
            for text, before in zip(held_out, held_out[1:] + held_out[:1], strict=True)
        ]
        for text in held_out:
            reference = whole(engine, text, voice)
            one, at = first_request(engine, text, voice)
            firsts.append(at)
            two, _ = first_request(engine, text, voice)
            versus.append(pesq_wb(reference, one))
            twice.append(pesq_wb(one, two))
            loud.append(abs(loudness(one) - loudness(two)))
            same += int(np.array_equal(one, two))
            mos_w.append(dnsmos(one))
            mos_h.append(dnsmos(reference))
        print(
            f"| {voice} | {before:.2f} | {untaught_first:.2f} | {taught_in:.0f} "
            f"| {statistics.median(firsts):.2f} "
            f"| {statistics.mean(versus):.2f} / {min(versus):.2f} "
            f"| {statistics.mean(own):.2f} / {min(own):.2f} | {min(twice):.2f} "
            f"| {same}/{len(held_out)} | {max(loud):.2f} "
            f"| {statistics.mean(mos_w):.2f} / {statistics.mean(mos_h):.2f} |",
            flush=True,
        )
    print(f"\nload after: {load()}; taught in: {args.taught_in}; {args.threads} threads")


if __name__ == "__main__":
    main()
