"""S: word times from the model's durations against Whisper's, in-process, one run.

    .venv/bin/python bench/word_times.py [--quick]

Prints two tables. Accuracy: held-out sentences (English with numbers, times and
units; Japanese apart) are spoken with word times, decoded whole, in windows, at
speed 1.5, after a lead silence, with a break between sentences and cut into several
calls; faster-whisper (`word_timestamps=True`, the tests' Whisper base) transcribes
the same audio, and where a word of ours and one of Whisper's begin on the same
aligned letter their starts are compared. As independent references from the
waveform itself: the words that follow a silence against the sound's onset, and,
inside running speech, the words that begin with a voiceless fricative (s, f, sh)
after a voiced sound against the edge where the energy above 4 kHz rises. And a
forced aligner (PocketSphinx's US English model, English only) placing the words
the model was given in the same audio: ours and Whisper's starts against its.
Windows against the whole decode: the same words' times. Cost: the first audio and
the whole piece with and without word times, interleaved in the same run (ratios).
Run it on a quiet machine: it says the load it saw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.aligner import Aligner, against_aligner, aligned_pairs, letters, pairs
from support.judge import Judge, judge

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.text.pieces import split_text
from wyoming_kokoro.timeline import Timeline, WordTime

VOICE = "jm_kumo"
VOICE_JA = "jf_alpha"
RATE = 24000

# Sentences of no other bench or test: what the durations are judged on.
ENGLISH = (
    "The train to Boston leaves at 6:45 am from platform 9.",
    "It is 21°C outside, and the wind blows at 15 km/h from the north.",
    "Your package of 2.5 kg arrived on March 3rd at 4:10 pm.",
    "The oven reached 180 degrees after 12 minutes, so the bread can go in.",
    "We drove 340 miles in 5 hours and spent $62.50 on fuel.",
    "The meeting moved from 9:30 to 11:15, and Sarah will call you at noon.",
    "Set the thermostat to 68°F before 10 pm, please.",
    "The battery is at 37 percent and needs about 45 minutes to charge.",
    "Dr. Patel measured 120 over 80 at her appointment on Tuesday.",
    "A 750 ml bottle of water costs €1.20 at the station kiosk.",
    "The garage door has been open for 3 hours and 20 minutes.",
    "Rain is expected between 2 and 5 pm, with 8 mm in total.",
    # Words that begin with s, f or sh after a vowel or a voiced consonant (S1b).
    "Lower the blinds at 7 so the sun stays off the sofa.",
    "The fridge holds 4 degrees, so the food stays fresh for five days.",
    "Mia will feed the fish at 8 and show the salad to Sam.",
    "Call Fiona at 5 and say the sale ends on the seventh.",
    "The hall fan runs at speed 3 on sunny summer afternoons.",
    "Open the window for 10 minutes, then shut it before supper.",
)
JAPANESE = (
    "明日の午前7時30分に東京駅で会いましょう。",
    "外の気温は21度で、少し風があります。",
    "荷物は3時間後に届く予定です。",
    "冷蔵庫の中に牛乳が2本残っています。",
    "会議は午後2時から始まります。",
    "電車が10分遅れています。",
)


def load_note() -> str:
    load = os.getloadavg()
    return f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} CPUs"


def spoken(
    engine: Engine,
    text: str,
    voice: str,
    lang: str,
    speed: float = 1.0,
    awaited: bool = False,
    limit: int = 0,
    lead: float = 0.0,
    pause: float = 0.0,
) -> tuple[np.ndarray, list[WordTime]]:
    """The text's audio and its word times, piece by piece as kokoro-say speaks it:
    `lead` seconds of silence first, `pause` seconds more between pieces (as an SSML
    break), calls cut at `limit` phonemes if given."""
    spec = engine.voice(voice)
    timeline = Timeline()
    audio = [np.zeros(int(lead * RATE), np.int16)]
    at = len(audio[0])
    for index, piece in enumerate(split_text(text, lang)):
        if index and pause:
            audio.append(np.zeros(int(pause * RATE), np.int16))
            at += len(audio[-1])
        calls = engine.plan(piece, spec, speed, lang, awaited=awaited and not index, words=True)
        if limit:
            calls = [part for call in calls for part in engine.shorten(call, limit)]
        for call in calls:
            begin = at
            for pcm, _, words in engine.timed(call):
                timeline.add(words, begin / RATE)
                audio.append(pcm)
                at += len(pcm)
    timeline.close()
    return np.concatenate(audio), timeline.words


def paired_starts(ours: list[WordTime], theirs: list[tuple[str, float]]) -> dict[int, float]:
    """Whisper's start for each word of ours (by index) that begins on the same
    aligned letter as a word of Whisper's."""
    matched = pairs([(w.word, w.start) for w in ours], theirs)
    return {i: theirs[j][1] for i, j in matched.items()}


def after_pause(ours: list[WordTime], index: int) -> bool:
    """Whether our word `index` follows a pause (or opens the audio) rather than
    running on from the word before."""
    start = ours[index].start
    before = next((w.end for w in reversed(ours[:index]) if w.end is not None), None)
    return start is None or before is None or start - before > 0.05


def starts_by_place(
    ours: list[WordTime], theirs: list[tuple[str, float]]
) -> tuple[list[float], list[float]]:
    """`starts_compared` split: the words inside running speech, those after a pause."""
    running: list[float] = []
    paused: list[float] = []
    for i, start in paired_starts(ours, theirs).items():
        if (mine := ours[i].start) is not None:
            (paused if after_pause(ours, i) else running).append(mine - start)
    return running, paused


def starts_compared(ours: list[WordTime], theirs: list[tuple[str, float]]) -> list[float]:
    """Start difference (ours less Whisper's) for every word of ours that begins on the
    same aligned letter as a word of Whisper's."""
    pairs = paired_starts(ours, theirs)
    return [mine - start for i, start in pairs.items() if (mine := ours[i].start) is not None]


# Inside running speech the waveform shows a word's start where the word begins with
# a voiceless fricative after a voiced sound: the share of energy above 4 kHz jumps
# there. Words after another fricative or a stop-fricative ending are left out (no edge).
_FRICATIVE_START = ("s", "f", "sh")
_FRICATIVE_END = ("s", "z", "x", "f", "sh", "ch", "th", "ce", "se", "ze", "ge", "ts")


def fricative_onsets(
    ours: list[WordTime], theirs: list[tuple[str, float]], audio: np.ndarray
) -> list[tuple[int, float, float]]:
    """(our word's index, ours less the edge, Whisper's less the edge) for the words
    that begin with a voiceless fricative after a voiced sound: the edge is where the
    share of energy above 4 kHz rises fastest, within 200 ms of both starts."""
    hop, size = RATE // 400, RATE // 100  # 2.5 ms steps, 10 ms frames
    signal = audio.astype(np.float32) / 32768
    count = (len(signal) - size) // hop
    frames = np.lib.stride_tricks.sliding_window_view(signal, size)[::hop][:count]
    spectrum = np.abs(np.fft.rfft(frames * np.hanning(size), axis=1)) ** 2
    freqs = np.fft.rfftfreq(size, 1 / RATE)
    high = spectrum[:, freqs >= 4000].sum(axis=1) + 1e-10
    share = 10 * np.log10(high / (spectrum.sum(axis=1) + 1e-10))
    share = np.convolve(share, np.ones(3) / 3, mode="same")
    rise = np.diff(share, prepend=share[0])
    pairs = paired_starts(ours, theirs)
    out = []
    for i, whisper in pairs.items():
        word, start = ours[i], ours[i].start
        before = letters(ours[i - 1].word) if i else ""
        if start is None or not before or not letters(word.word).startswith(_FRICATIVE_START):
            continue
        if before.endswith(_FRICATIVE_END) or not before[-1].isalpha():
            continue
        lo = max(0, int((min(start, whisper) - 0.2) * RATE) // hop)
        hi = min(count, int((max(start, whisper) + 0.2) * RATE) // hop)
        if hi - lo < 8:
            continue
        edge = (lo + int(np.argmax(rise[lo:hi]))) * hop + size // 2
        out.append((i, start - edge / RATE, whisper - edge / RATE))
    return out


def onsets_compared(ours: list[WordTime], audio: np.ndarray) -> list[float]:
    """Start difference (ours less the sound's) for the words that follow a silence:
    there the sound's onset is plain in the waveform (5 ms steps, 40 dB under the
    loudest, after at least 80 ms of quiet), an aligner of its own."""
    hop = RATE // 200
    steps = audio[: len(audio) // hop * hop].astype(np.float32).reshape(-1, hop)
    level = 10 * np.log10((steps**2).mean(axis=1) + 1e-9)
    loud = level > level.max() - 40
    out = []
    quiet = 0
    for i, is_loud in enumerate(loud):
        if is_loud and quiet >= 16:
            onset = i * hop / RATE
            near = [w.start for w in ours if w.start is not None and abs(w.start - onset) < 0.25]
            if near:
                out.append(min(near, key=lambda t: abs(t - onset)) - onset)
        quiet = 0 if is_loud else quiet + 1
    return out


def accuracy(
    engine: Engine, ear: Judge, texts: tuple[str, ...], voice: str, lang: str, **how: Any
) -> dict[str, float]:
    diffs: list[float] = []
    onsets: list[float] = []
    whisper_onsets: list[float] = []
    fricatives: list[tuple[float, float]] = []
    aligner_edges: list[float] = []  # the aligner's start less the fricative's edge
    running: list[float] = []
    paused: list[float] = []
    aligned_running: list[float] = []
    aligned_paused: list[float] = []
    whisper_running: list[float] = []
    whisper_paused: list[float] = []
    unaligned = 0
    aligner = Aligner() if lang.startswith("en") else None
    words = unmatched = 0
    for text in texts:
        audio, ours = spoken(engine, text, voice, lang, **how)
        words += len(ours)
        unmatched += sum(not w.matched for w in ours)
        heard = ear.word_starts(audio, RATE, lang.split("-")[0])
        diffs += starts_compared(ours, heard)
        inside_speech, after_quiet = starts_by_place(ours, heard)
        running += inside_speech
        paused += after_quiet
        onsets += onsets_compared(ours, audio)
        edges = fricative_onsets(ours, heard, audio)
        fricatives += [(mine, whisper) for _, mine, whisper in edges]
        # Whisper against the same onsets: which of the two references is off.
        theirs = [WordTime(word, start, start) for word, start in heard]
        whisper_onsets += onsets_compared(theirs, audio)
        aligned = aligner.starts(audio, text) if aligner else None
        if aligner and aligned is None:
            unaligned += 1
        elif aligned:
            ours_aligned = against_aligner([(w.word, w.start) for w in ours], aligned)
            aligned_running += ours_aligned[0]
            aligned_paused += ours_aligned[1]
            found = aligned_pairs([(w.word, w.start) for w in ours], aligned)
            for i, from_edge, _ in edges:
                if i in found and (start := ours[i].start) is not None:
                    aligner_edges.append(aligned[found[i]][1] - (start - from_edge))
            whose = against_aligner([(w, t) for w, t in heard], aligned)
            whisper_running += whose[0]
            whisper_paused += whose[1]
    signed = np.array(diffs) * 1000
    return {
        "words": words,
        "compared": len(diffs),
        "unmatched": unmatched,
        "median": float(np.median(np.abs(signed))),
        "p90": float(np.percentile(np.abs(signed), 90)),
        "signed": float(np.median(signed)),
        "onsets": len(onsets),
        "onset_signed": float(np.median(onsets)) * 1000 if onsets else float("nan"),
        "onset_median": float(np.median(np.abs(onsets))) * 1000 if onsets else float("nan"),
        "onset_p90": float(np.percentile(np.abs(onsets), 90)) * 1000 if onsets else float("nan"),
        "whisper_onsets": len(whisper_onsets),
        "whisper_onset_signed": (
            float(np.median(whisper_onsets)) * 1000 if whisper_onsets else float("nan")
        ),
        "running": len(running),
        "running_median": _median_ms([abs(d) for d in running]),
        "running_p90": _p90_ms(running),
        "running_signed": _median_ms(running),
        "paused": len(paused),
        "paused_median": _median_ms([abs(d) for d in paused]),
        "paused_p90": _p90_ms(paused),
        "paused_signed": _median_ms(paused),
        "unaligned": unaligned,
        **_spread("aligned", aligned_running, aligned_paused),
        **_spread("whisper_aligned", whisper_running, whisper_paused),
        "fricatives": len(fricatives),
        "fricative_ours": _median_ms([a for a, _ in fricatives]),
        "fricative_ours_abs": _median_ms([abs(a) for a, _ in fricatives]),
        "fricative_whisper": _median_ms([b for _, b in fricatives]),
        "fricative_whisper_abs": _median_ms([abs(b) for _, b in fricatives]),
        "fricative_aligner": _median_ms(aligner_edges),
        "fricative_aligner_abs": _median_ms([abs(d) for d in aligner_edges]),
    }


def _spread(name: str, running: list[float], paused: list[float]) -> dict[str, float]:
    """Median and p90 of |difference| (ms) and the signed median: all, run on, after a
    silence."""
    out: dict[str, float] = {}
    for part, values in (("", running + paused), ("_running", running), ("_paused", paused)):
        out[f"{name}{part}"] = len(values)
        out[f"{name}{part}_median"] = _median_ms([abs(d) for d in values])
        out[f"{name}{part}_p90"] = _p90_ms(values)
        out[f"{name}{part}_signed"] = _median_ms(values)
    return out


def _median_ms(values: list[float]) -> float:
    return float(np.median(values)) * 1000 if values else float("nan")


def _p90_ms(values: list[float]) -> float:
    return float(np.percentile(np.abs(values), 90)) * 1000 if values else float("nan")


def windows_against_whole(engine: Engine, texts: tuple[str, ...]) -> tuple[int, float]:
    """Words compared, and the largest start or end difference in frames."""
    largest, count = 0.0, 0
    for text in texts:
        whole = spoken(engine, text, VOICE, "en-us")[1]
        windowed = spoken(engine, text, VOICE, "en-us", awaited=True)[1]
        for a, b in zip(whole, windowed, strict=True):
            if a.start is None or b.start is None or a.end is None or b.end is None:
                continue
            count += 1
            largest = max(largest, abs(a.start - b.start) / 0.025, abs(a.end - b.end) / 0.025)
    return count, largest


def cost(engine: Engine, texts: tuple[str, ...], rounds: int) -> dict[str, float]:
    """First audio and whole piece, seconds, with and without words (interleaved)."""
    spec = engine.voice(VOICE)
    times: dict[str, list[float]] = {"first": [], "first+words": [], "total": [], "total+words": []}
    for _ in range(rounds):
        for text in texts:
            for words in (False, True):
                began = time.perf_counter()
                first = None
                for call in engine.plan(text, spec, 1.0, "en-us", awaited=True, words=words):
                    chunks = engine.timed(call) if words else engine.stream(call)
                    for chunk in chunks:
                        if first is None and len(chunk[0]):
                            first = time.perf_counter() - began
                suffix = "+words" if words else ""
                times["first" + suffix].append(first or 0.0)
                times["total" + suffix].append(time.perf_counter() - began)
    return {k: statistics.median(v) for k, v in times.items()}


CONDITIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("decoded whole", {}),
    ("in windows (a listener's first sentence)", {"awaited": True}),
    ("speed 1.5", {"speed": 1.5}),
    ("lead silence 500 ms", {"lead": 0.5}),
    ("1.0 s break between sentences", {"pause": 1.0}),
    ("each piece cut into calls of 60 phonemes", {"limit": 60}),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer sentences and rounds")
    parser.add_argument("--no-cost", action="store_true", help="accuracy only (S1)")
    args = parser.parse_args()
    print(f"Before: {load_note()}")
    engine = Engine(resolve(None, None, []))
    engine.warm_up()
    ear = judge()
    # Two sentences a text: a lead silence, a break and windows each have a second.
    english = tuple(" ".join(ENGLISH[i : i + 2]) for i in range(0, len(ENGLISH), 2))
    english = english[:3] if args.quick else english
    print("\n#### S1. Word starts against Whisper's and against the sound's onsets\n")
    print(
        "| text, decode | words | unmatched | vs Whisper: compared | median | p90 "
        "| ours − Whisper, median | vs onsets: compared | median | p90 | ours − onset, median "
        "| Whisper − onset, median (compared) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[tuple[str, tuple[str, ...], str, str, dict[str, Any]]] = [
        (f"English, {name}", english, VOICE, "en-us", how)
        for name, how in (CONDITIONS[:2] if args.quick else CONDITIONS)
    ]
    rows.append(("Japanese, decoded whole", JAPANESE, VOICE_JA, "ja", {}))
    inside = []
    for name, texts, voice, lang, how in rows:
        r = accuracy(engine, ear, texts, voice, lang, **how)
        inside.append((name, r))
        print(
            f"| {name} | {r['words']} | {r['unmatched']} | {r['compared']} "
            f"| {r['median']:.0f} ms | {r['p90']:.0f} ms | {r['signed']:+.0f} ms "
            f"| {r['onsets']} | {r['onset_median']:.0f} ms | {r['onset_p90']:.0f} ms "
            f"| {r['onset_signed']:+.0f} ms "
            f"| {r['whisper_onset_signed']:+.0f} ms ({r['whisper_onsets']}) |"
        )
    print(
        "\n#### S1a. Against Whisper by where the word stands: run on from the word "
        "before, or after a pause (or first)\n"
    )
    print(
        "| text, decode | running on: compared | median | p90 | ours − Whisper, median "
        "| after a pause: compared | median | p90 | ours − Whisper, median |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in inside:
        print(
            f"| {name} | {r['running']} | {r['running_median']:.0f} ms "
            f"| {r['running_p90']:.0f} ms | {r['running_signed']:+.0f} ms "
            f"| {r['paused']} | {r['paused_median']:.0f} ms | {r['paused_p90']:.0f} ms "
            f"| {r['paused_signed']:+.0f} ms |"
        )
    print(
        "\n#### S1b. Inside running speech: the edge of a voiceless fricative that begins "
        "a word after a voiced sound\n"
    )
    print(
        "| text, decode | words | ours − edge, median | |ours − edge|, median "
        "| Whisper − edge, median | |Whisper − edge|, median "
        "| aligner − edge, median | |aligner − edge|, median |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, r in inside:
        if r["fricatives"]:
            print(
                f"| {name} | {r['fricatives']} | {r['fricative_ours']:+.0f} ms "
                f"| {r['fricative_ours_abs']:.0f} ms | {r['fricative_whisper']:+.0f} ms "
                f"| {r['fricative_whisper_abs']:.0f} ms "
                f"| {r['fricative_aligner']:+.0f} ms | {r['fricative_aligner_abs']:.0f} ms |"
            )
    print(
        "\n#### S1c. Against a forced aligner (PocketSphinx, US English acoustic model, "
        "10 ms frames), ours and Whisper's\n"
    )
    print(
        "| text, decode | ours: compared | median | p90 | ours − aligner, median "
        "| run on: median / p90 | after a silence: compared, median / p90, signed "
        "| Whisper: compared | median | p90 | Whisper − aligner, median |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in inside:
        if not r.get("aligned"):
            continue
        a, w = "aligned", "whisper_aligned"
        print(
            f"| {name} | {r[a]:.0f} | {r[a + '_median']:.0f} ms | {r[a + '_p90']:.0f} ms "
            f"| {r[a + '_signed']:+.0f} ms "
            f"| {r[a + '_running_median']:.0f} / {r[a + '_running_p90']:.0f} ms "
            f"| {r[a + '_paused']:.0f}, {r[a + '_paused_median']:.0f} / "
            f"{r[a + '_paused_p90']:.0f} ms, {r[a + '_paused_signed']:+.0f} ms "
            f"| {r[w]:.0f} | {r[w + '_median']:.0f} ms | {r[w + '_p90']:.0f} ms "
            f"| {r[w + '_signed']:+.0f} ms |"
        )
    count, frames = windows_against_whole(engine, english)
    print(
        f"\nWindows against the whole decode: {count} words, largest difference "
        f"{frames:.2f} frames."
    )
    if args.no_cost:
        return
    print("\n#### S2. Cost of word times (median, seconds)\n")
    c = cost(engine, ENGLISH[:4], 1 if args.quick else 3)
    print("| | without | with words | ratio |")
    print("|---|---|---|---|")
    for key in ("first", "total"):
        print(
            f"| {key} audio | {c[key]:.3f} | {c[key + '+words']:.3f} "
            f"| {c[key + '+words'] / c[key]:.2f}× |"
        )
    print(f"\nAfter: {load_note()}")


if __name__ == "__main__":
    main()
