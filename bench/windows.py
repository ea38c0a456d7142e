"""W: decoding in windows against whole calls, in-process, warm, one run.

    .venv/bin/python bench/windows.py [--heard] [--sentences N] [--sound-only | --latency-only]
    taskset -c 0 .venv/bin/python bench/windows.py --latency-only --threads 1  # one core

Prints three tables: what each part of the cut model costs (and the fitted cost of
the generator per frame); the first audio of a listener's first sentence by way of
decoding (kokoro-onnx create() on the whole sentence is the baseline measured in the
same run), and the silence a listener would hear between windows; and how the windows
sound against the whole decode (log-mel distance;
with --heard also what the Whisper judge hears, against the same sentences decoded
whole and cut into phrases). Run it on a quiet machine: it says the load it saw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from conv_stft import conv_stft_generator
from support.audio_distance import log_mel_distance
from texts import (
    HELD_OUT,
    HELD_OUT_JA,
    HELD_OUT_LATE,
    HELD_OUT_MORE,
    HELD_OUT_SUBJECT,
    REPLIES,
    SENTENCES,
    SENTENCES_JA,
)

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting, graph, prior, teaching
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.loading import load_cut
from wyoming_kokoro.synthesis.pacing import Windows
from wyoming_kokoro.synthesis.prior import VoicePriors

VOICE = "jm_kumo"
VOICE_JA = "jf_alpha"


def best(run: Callable[[], object], times: int = 2) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        spent.append(time.perf_counter() - started)
    return min(spent)


def played(pieces: Iterable[tuple[np.ndarray, bool]]) -> tuple[float, float]:
    """First audio, and the silence a listener playing the pieces as they come hears
    between them."""
    started = time.perf_counter()
    first, plays_until, silent = None, 0.0, 0.0
    for pcm, _ in pieces:
        now = time.perf_counter() - started
        if first is None:
            first = plays_until = now
        silent += max(0.0, now - plays_until)
        plays_until = max(plays_until, now) + len(pcm) / 24_000
    assert first is not None
    return first, silent


def distance_row(name: str, distances: list[float]) -> list[str]:
    """A W3 row: the mean and the worst sentence's log-mel distance."""
    return [name, f"{np.mean(distances):.2f} dB", f"{np.max(distances):.2f} dB"]


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--heard", action="store_true", help="also ask the Whisper judge")
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--sound-only", action="store_true", help="only W3 and W4")
    parser.add_argument("--latency-only", action="store_true", help="only W1 and W2")
    parser.add_argument("--heard-only", action="store_true", help="only W4 (implies --heard)")
    parser.add_argument("--english-only", action="store_true", help="W4 without Japanese")
    # One thread (with `taskset -c 0`) is the one-core goal; the pace file is per count.
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime threads")
    args = parser.parse_args()
    # Up to 64: the first 32 are the ones every earlier run used.
    texts = (HELD_OUT + HELD_OUT_SUBJECT + HELD_OUT_MORE + HELD_OUT_LATE)[: args.sentences]
    assets = resolve(None, None, [])
    directory = cutting.ready(assets.model) or cutting.build(assets, threads=args.threads)
    windowed = Engine(assets, EngineSettings(threads=args.threads))
    whole = Engine(assets, EngineSettings(threads=args.threads, decode="whole"))
    cut = CutModel(load_cut(directory, args.threads))
    voice = windowed.voice(VOICE)
    kokoro = whole.kokoro
    for engine in (windowed, whole):
        engine.warm_up()
    # What the windows are decoded with must not depend on what this machine's cache
    # has learned: the windowed engine learns here from texts.SENTENCES only (never
    # the measured sentences), and a copy that has heard nothing uses probe rows.
    scratch = tempfile.TemporaryDirectory()
    unheard = Engine(assets, EngineSettings(threads=args.threads))
    unheard.priors = VoicePriors(Path(scratch.name) / "unheard", cut.kinds)
    windowed.priors = VoicePriors(Path(scratch.name) / "heard", cut.kinds)
    for text in SENTENCES[: prior.TRUSTED]:
        for _ in windowed.speak(text, voice):
            pass
    assert windowed.priors.calls(VOICE) >= prior.TRUSTED
    if not args.english_only:
        for text in SENTENCES_JA:
            for _ in windowed.speak(text, windowed.voice(VOICE_JA), lang="ja"):
                pass
        assert windowed.priors.calls(VOICE_JA) >= prior.TRUSTED
    load = os.getloadavg()[0]
    if args.heard_only:
        print_heard(whole, windowed, texts, args.sentences, args.english_only)
        return

    if not args.sound_only:
        # -- the parts' cost -------------------------------------------------------
        frames, plan_s, gen_s = [], [], []
        for text in texts:
            x = windowed.inputs(windowed.plan(text, voice)[0])
            plan = cut.plan(x)
            frames.append(cut.frames(plan))
            plan_s.append(best(lambda x=x: cut.plan(x)))
            gen_s.append(best(lambda plan=plan: cut.whole(plan)))
        slope, intercept = np.polyfit(frames, gen_s, 1)
        share = sum(plan_s) / (sum(plan_s) + sum(gen_s))
        print(
            f"## W1 The cut model's parts ({len(texts)} sentences, "
            f"{args.threads} threads, load {load:.1f})\n"
        )
        print(
            table(
                ["part", "per call, mean", "share"],
                [
                    [
                        "plan (text → features, source, durations)",
                        f"{np.mean(plan_s):.3f} s",
                        f"{share:.0%}",
                    ],
                    ["generator + inverse STFT", f"{np.mean(gen_s):.3f} s", f"{1 - share:.0%}"],
                    [
                        "generator, fitted",
                        f"{1000 * slope:.1f} ms/frame + {1000 * intercept:.0f} ms",
                        "",
                    ],
                ],
            )
        )

        # -- first audio -------------------------------------------------------------
        ways: dict[str, list[float]] = {
            "kokoro-onnx create()": [],
            "whole call": [],
            "phrase cut (--decode whole)": [],
            f"windows, the voice's statistics ({prior.TRUSTED} calls heard)": [],
            "windows, probe rows (a voice not heard yet)": [],
        }
        gaps: dict[str, list[float]] = {name: [] for name in list(ways)[-2:]}
        style = whole.style(voice)
        for text in texts:
            phonemes = whole.phonemes(text, "en-us")
            ways["kokoro-onnx create()"].append(
                best(lambda p=phonemes: kokoro.create(p, voice=style, is_phonemes=True))
            )
            call = whole.plan(text, voice)[0]
            ways["whole call"].append(best(lambda c=call: whole.run(c)))
            quick = whole.plan(text, voice, awaited=True)[0]
            ways["phrase cut (--decode whole)"].append(best(lambda c=quick: whole.run(c)))
            first = windowed.plan(text, voice, awaited=True)[0]
            for name, engine in zip(gaps, (windowed, unheard), strict=True):
                runs = [played(engine.stream(first)) for _ in range(2)]
                ways[name].append(min(r[0] for r in runs))
                gaps[name].append(min(r[1] for r in runs))
        base = statistics.median(ways["kokoro-onnx create()"])
        rows = []
        for name, spent in ways.items():
            ordered = sorted(spent)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            median = statistics.median(spent)
            silent = f"{sum(gaps[name]):.2f} s / {max(gaps[name]):.2f} s" if name in gaps else "–"
            row = [name, f"{median:.2f} s", f"{p95:.2f} s", f"{median / base:.2f}×", silent]
            rows.append(row)
        print(
            f"\n## W2 First audio of a listener's first sentence "
            f"(warm, {args.threads} threads, load {os.getloadavg()[0]:.1f})\n"
        )
        head = ["decoding", "median", "p95", "vs kokoro-onnx", "silence inside: sum / worst"]
        print(table(head, rows))
        print(
            "\nSilence inside: how long a listener playing the windows as they come would "
            "wait between two of them (the better of two runs per sentence)."
        )

        print_replies(whole, windowed, kokoro, voice)

    if args.latency_only:
        return

    # -- how it sounds -------------------------------------------------------------
    # The voice's statistics: learned from texts.SENTENCES (as above, the default once
    # a voice has said 8 calls), and as a voice that has said more predicts them:
    # taught the held-out sentences after the measured ones (never a measured one).
    plans = [cut.plan(windowed.inputs(windowed.plan(t, voice)[0])) for t in texts]
    decoded = [cut.decode(plan) for plan in plans]  # the reference, and its statistics
    # The same 8 calls' plain frame-weighted average (the first estimate windows had).
    taught = [cut.plan(windowed.inputs(windowed.plan(t, voice)[0])) for t in SENTENCES]
    taught = [p for p in taught if cut.frames(p) >= prior.MIN_FRAMES]
    taught_stats = [cut.statistics(p) for p in taught]
    first = taught[: prior.TRUSTED]
    plain = weighted_average(taught_stats[: prior.TRUSTED], [cut.frames(p) for p in first])
    later = list(HELD_OUT + HELD_OUT_SUBJECT + HELD_OUT_MORE + HELD_OUT_LATE)[len(texts) :]
    more = [cut.plan(windowed.inputs(windowed.plan(t, voice)[0])) for t in later]
    more = [p for p in more if cut.frames(p) >= prior.MIN_FRAMES]
    more_stats = [cut.statistics(p) for p in more]

    def spoken(calls: list[tuple[dict, dict]]) -> VoicePriors:
        priors = VoicePriors(None, cut.kinds)
        for plan, stats in calls:
            priors.learn(VOICE, stats, cut.traits(plan))
        return priors

    heard = [*zip(taught, taught_stats, strict=True), *zip(more, more_stats, strict=True)]
    lessons = [cut.plan(windowed.inputs(windowed.plan(t, voice)[0])) for t in teaching.TEXTS]
    served = spoken([(p, cut.statistics(p)) for p in lessons])
    sixteen = spoken(heard[:16])
    many = spoken(list(zip(more, more_stats, strict=True)))

    estimators: dict[str, Callable[[int, dict[str, np.ndarray]], dict | None]] = {
        f"windows, the voice's statistics from {prior.TRUSTED} calls": (
            lambda i, plan: windowed.priors.estimate(VOICE, cut.traits(plan))
        ),
        f"windows, the plain average of the same {prior.TRUSTED} calls": (lambda i, plan: plain),
        f"windows, taught as the server ({len(lessons)} calls, default)": (
            lambda i, plan: served.estimate(VOICE, cut.traits(plan))
        ),
        "windows, the voice's statistics from 16 calls": (
            lambda i, plan: sixteen.estimate(VOICE, cut.traits(plan))
        ),
        f"windows, the voice's statistics from {len(more)} calls": (
            lambda i, plan: many.estimate(VOICE, cut.traits(plan))
        ),
    }
    rows = []
    for name, estimator in estimators.items():
        distances = []
        for index, plan in enumerate(plans):
            estimate = estimator(index, plan)
            start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
            pieces = [a for a, _ in cut.windowed(plan, estimate)]
            reference = decoded[index][0][start:]
            distances.append(log_mel_distance(reference, np.concatenate(pieces)))
        rows.append(distance_row(name, distances))
    configs = {
        "windows, 1 probe row of 7 snippets (a voice not heard yet)": Windows(),
        "windows, 2 probe rows of 7 snippets": Windows(probes=2),
        "windows, 0 probes (the first window's statistics)": None,
    }
    sessions = load_cut(directory, 2)
    models = {
        name: CutModel(sessions, config or Windows(probes=0)) for name, config in configs.items()
    }
    for name in configs:
        distances = []
        for plan, (whole_audio, _) in zip(plans, decoded, strict=True):
            start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
            reference = whole_audio[start:]
            model = models[name]
            pieces = [a for a, _ in model.windowed(plan)]
            distances.append(log_mel_distance(reference, np.concatenate(pieces)))
        rows.append(distance_row(name, distances))
    # The yardstick: the same sentence decoded whole in one call after the next one
    # (each planned alone, the generator run once over both, as a call holding two
    # short sentences is), against the sentence decoded alone.
    distances = []
    for plan, other, (alone, _) in zip(plans, plans[1:] + plans[:1], decoded, strict=True):
        start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
        after = cut.whole(after_another(other, plan))[-len(alone) :]
        distances.append(log_mel_distance(alone[start:], after[start:]))
    rows.append(
        distance_row(
            "yardstick: the whole decode after another sentence in the same call", distances
        )
    )
    # And how far the whole decode moves when one operator rounds differently: the
    # source's STFT as a convolution (bench/conv_stft.py).
    rounded = CutModel(
        {**sessions, graph.GENERATOR: conv_stft_generator(directory / graph.GENERATOR, 2)}
    )
    distances = []
    for plan, (alone, _) in zip(plans, decoded, strict=True):
        start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
        distances.append(log_mel_distance(alone[start:], rounded.whole(plan)[start:]))
    rows.append(
        distance_row(
            "yardstick: the whole decode with the source's STFT as a convolution", distances
        )
    )
    # And the floor: the whole decode of the same plan with the generator's features
    # one float32 step larger. The int8 layers grow a rounding step that small into
    # a change a log-mel sees (a window decoded alone rounds that differently too).
    distances = []
    step = np.float32(1 + np.finfo(np.float32).eps)
    for plan, (alone, _) in zip(plans, decoded, strict=True):
        start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
        nudged = {**plan, graph.FEATURES: plan[graph.FEATURES] * step}
        distances.append(log_mel_distance(alone[start:], cut.whole(nudged)[start:]))
    rows.append(
        distance_row(
            "yardstick: the whole decode with its features one float32 step larger", distances
        )
    )
    print("\n## W3 Windows against the whole decode (log-mel L1)\n")
    print(table(["decoding", "mean", "worst sentence"], rows))

    if args.heard:
        print_heard(whole, windowed, texts, args.sentences, args.english_only)


def print_replies(whole: Engine, windowed: Engine, kokoro: object, voice: object) -> None:
    """First audio of short replies, spoken whole or in windows (best of 3), with the
    voice taught as the server teaches it; and how the windows sound against the
    whole call (log-mel, loudness)."""
    learned = windowed.priors
    with tempfile.TemporaryDirectory() as scratch:
        windowed.priors = VoicePriors(Path(scratch), windowed.cut.kinds)
        taught = teaching.teach(windowed, VOICE)
        style = whole.style(voice)
        rows = []
        for text in REPLIES:
            phonemes = whole.phonemes(text, "en-us")
            create = best(lambda p=phonemes: kokoro.create(p, voice=style, is_phonemes=True), 3)
            call = whole.plan(text, voice)[0]
            at_once = best(lambda c=call: whole.run(c), 3)
            first = windowed.plan(text, voice, awaited=True)[0]
            runs = [played(windowed.stream(first)) for _ in range(3)]
            soonest = min(r[0] for r in runs)
            cut = windowed.cut
            plan = cut.plan(windowed.inputs(first))
            estimate = windowed.priors.estimate(VOICE, cut.traits(plan))
            start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
            reference = cut.whole(plan)[start:]
            pieces = [a for a, _ in cut.windowed(plan, estimate)]
            joined = np.concatenate(pieces)
            step = 10 * np.log10(np.mean(joined**2) / np.mean(reference**2))
            rows.append(
                [
                    f"“{text}”",
                    str(cut.frames(plan)),
                    f"{create:.2f} s",
                    f"{at_once:.2f} s",
                    f"{soonest:.2f} s ({len(pieces)})",
                    f"{soonest / create:.2f}×",
                    f"{log_mel_distance(reference, joined):.2f} dB",
                    f"{step:+.1f} dB",
                ]
            )
    windowed.priors = learned
    print(
        f"\n## W2, short replies (warm, best of 3, voice taught as the server: {taught} calls; "
        f"load {os.getloadavg()[0]:.1f})\n"
    )
    head = [
        "text",
        "frames",
        "kokoro-onnx create()",
        "whole call",
        "windows (how many)",
        "windows / create()",
        "log-mel vs whole",
        "loudness vs whole",
    ]
    print(table(head, rows))


def print_heard(
    whole: Engine, windowed: Engine, texts: list[str], count: int, english_only: bool = False
) -> None:
    """W4: English and Japanese held-out sentences, every path, judged by Whisper."""
    languages = [("en-us", VOICE, texts), ("ja", VOICE_JA, list(HELD_OUT_JA[:count]))]
    for lang, name, sentences in languages[:1] if english_only else languages:
        rows = heard_rows(whole, windowed, whole.voice(name), lang, sentences)
        measure = "WER" if lang == "en-us" else "reading CER"
        print(
            f"\n## W4 What the Whisper judge hears ({len(sentences)} held-out "
            f"sentences, {lang}, {name})\n"
        )
        print(table(["path", measure], rows))


def weighted_average(
    statistics: list[dict[str, np.ndarray]], frames: list[int]
) -> dict[str, np.ndarray]:
    """The statistics' average weighted by frames, in their own types."""
    average = {}
    for name, first in statistics[0].items():
        mean = sum(
            f * np.asarray(s[name], np.float64) for s, f in zip(statistics, frames, strict=False)
        )
        mean = mean / sum(frames)
        average[name] = np.asarray(np.round(mean) if first.dtype == np.uint8 else mean)
        average[name] = average[name].astype(first.dtype)
    return average


def after_another(first: dict[str, np.ndarray], plan: dict[str, np.ndarray]) -> dict:
    """`plan` preceded by `first` in one generator input (the style of `plan`)."""
    joined = dict(plan)
    joined[graph.FEATURES] = np.concatenate([first[graph.FEATURES], plan[graph.FEATURES]], 2)
    joined[graph.SOURCE] = np.concatenate(
        [first[graph.SOURCE][:, : -graph.SOURCE_TAIL], plan[graph.SOURCE]], 1
    )
    return joined


def heard_rows(
    whole: Engine, windowed: Engine, voice: object, lang: str, sentences: Iterable[str]
) -> list[list[str]]:
    """Mean WER (reading CER for Japanese) per path, the same sentences on each."""
    from support.judge import error, heard

    language = lang.split("-")[0]
    style = whole.style(voice)  # type: ignore[arg-type]

    def say(engine: Engine, text: str, quick: bool) -> np.ndarray:
        calls = engine.plan(text, voice, lang=lang, awaited=quick)  # type: ignore[arg-type]
        return np.concatenate([p for c in calls for p, _ in engine.stream(c)])

    paths: dict[str, Callable[[str], np.ndarray]] = {
        "kokoro-onnx create() (same phonemes)": lambda t: whole.kokoro.create(
            whole.phonemes(t, lang), voice=style, is_phonemes=True
        )[0],
        "whole call": lambda t: say(whole, t, False),
        "phrase cut (--decode whole)": lambda t: say(whole, t, True),
        "windows": lambda t: say(windowed, t, True),
    }
    rows = []
    for name, speak in paths.items():
        rates = [error(t, heard(speak(t), language=language), language) for t in sentences]
        rows.append([name, f"{np.mean(rates):.3f}"])
    return rows


if __name__ == "__main__":
    main()
