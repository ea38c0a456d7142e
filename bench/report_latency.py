"""Section C of RESULTS.md: the cold path, the model load, the first phrase, wyoming-bench."""

from __future__ import annotations

import statistics
from typing import Any

from fmt import Record, goal, num, ratio, result, sec, table


def _mean(values: list[float]) -> float:
    values = [v for v in values if v == v]  # drop NaN (no pitch found)
    return statistics.fmean(values) if values else float("nan")


def _delta(r: Record, key: str) -> float:
    """Cold minus warm for a variant+mode key such as "synth" or "prefork_stream"."""
    variant, _, mode = key.rpartition("_")
    prefix = f"{variant}_" if variant else ""
    fallback = r[f"{prefix}cold_{mode}"] - r[f"{prefix}warm_{mode}"]
    return r.get(f"{prefix}delta_{mode}", fallback)


def _silent(r: Record, mode: str, variant: str = "") -> str:
    """The worst silence inside the sentence over the rounds, cold / warm (older
    records did not measure it)."""
    silent = r.get("silent", {})
    cold, warm = f"{variant}cold_{mode}", f"{variant}warm_{mode}"
    if cold not in silent:
        return "–"
    return f"{sec(silent[cold])} / {sec(silent[warm])}"


def _cold(r: Record) -> list[str]:
    rows = [
        [
            "`synthesize`" if mode == "synth" else "streaming (worker starts at synthesize-start)",
            sec(r[f"warm_{mode}"]),
            sec(r[f"cold_{mode}"]),
            sec(_delta(r, mode)),
            ratio(r[f"warm_{mode}"], r["kokoro_create"]),
            _silent(r, mode),
        ]
        for mode in ("synth", "stream")
    ]
    rows += [
        [
            f"{'`synthesize`' if mode == 'synth' else 'streaming'}, `--prefork`",
            sec(r[f"prefork_warm_{mode}"]),
            sec(r[f"prefork_cold_{mode}"]),
            sec(_delta(r, f"prefork_{mode}")),
            ratio(r[f"prefork_warm_{mode}"], r["kokoro_create"]),
            _silent(r, mode, "prefork_"),
        ]
        for mode in ("synth", "stream")
        if f"prefork_cold_{mode}" in r
    ]
    delta = max(_delta(r, "synth"), _delta(r, "stream"))
    return [
        f"#### C1. Cold vs warm: “{r['text']}” (median of {r['rounds']} rounds; cold − warm "
        "is the median of each round's cold request minus the warm one right after it)\n",
        table(
            [
                "HA call",
                "warm",
                "cold",
                "cold − warm",
                "warm / kokoro-onnx `create()`",
                "silence inside, worst: cold / warm",
            ],
            rows,
        ),
        f"kokoro-onnx `create()` on the same sentence, model loaded: {sec(r['kokoro_create'])}. "
        f"Worker ready (model loaded and text side warmed) {sec(r['engine_ready_s'])} after "
        f"it starts. Cold ≤ warm + 0.5 s (default): {goal(delta <= 0.5, 'goal')}.\n",
    ]


def _load(r: Record) -> list[str]:
    rows = [
        [
            label,
            sec(r[key]["imports"]),
            sec(r[key]["engine"]),
            sec(r[key]["first_call"]),
            sec(r[key]["imports"] + r[key]["engine"] + r[key]["first_call"]),
        ]
        for key, label in (("onnx", "the .onnx file"), ("copy", "the optimized copy"))
    ]
    return [
        f"#### C2. A fresh process until it speaks (median of {r['rounds']})\n",
        table(["model loaded from", "imports", "engine ready", "first call", "total"], rows),
        "“Engine ready” includes the text side's first use, which overlaps the model load. "
        f"The copy saves {sec(r['onnx']['engine'] - r['copy']['engine'])} per burst.\n",
    ]


def _phrase(r: Record) -> list[str]:
    rows = r["rows"]
    cut = [row for row in rows if row["cut"]]
    seams = [row["seam"] for row in cut if row.get("seam")]
    gaps = [gap for row in rows for gap in row["word_gaps"]]
    wer_quick = _mean([row["wer_quick"] for row in rows])
    wer_whole = _mean([row["wer_whole"] for row in rows])
    table_rows = [
        [
            "first call, median over sentences",
            sec(statistics.median(row["first_call_quick"] for row in rows)),
            sec(statistics.median(row["first_call_whole"] for row in rows)),
        ],
        ["recognizer WER, mean", num(wer_quick, 3), num(wer_whole, 3)],
        [
            "pitch jump at the seam / at the model's own pauses",
            num(_mean([s["semitones"] for s in seams]), 1, " st"),
            num(_mean([g["semitones"] for g in gaps]), 1, " st"),
        ],
        [
            "loudness jump at the seam / at the model's own pauses",
            num(_mean([s["db"] for s in seams]), 1, " dB"),
            num(_mean([g["db"] for g in gaps]), 1, " dB"),
        ],
    ]
    lines = [
        f"#### C3. The opening phrase as its own call ({len(rows)} held-out sentences, "
        f"{len(cut)} cut)\n",
        table(["", "opening phrase first", "whole sentence"], table_rows),
        f"WER change {num(wer_quick - wer_whole, 3)}: "
        f"{goal(wer_quick - wer_whole <= 0.02, 'goal ≤ +0.02')}.\n",
    ]
    if "underrun" in rows[0]:
        lines += _phrase_sets(rows)
    return lines


def _phrase_sets(rows: list[dict[str, Any]]) -> list[str]:
    """Per set of sentences, and the silence inside the sentence against the previous plan."""
    table_rows = []
    for kind, label in (("phrase", "a phrase cut"), ("subject", "a cut before the verb")):
        chosen = [row for row in rows if row["set"] == kind]
        if not chosen:
            continue
        table_rows.append(
            [
                f"{label} ({len(chosen)})",
                f"{sec(statistics.median(r['first_call_quick'] for r in chosen))} / "
                f"{sec(statistics.median(r['first_call_whole'] for r in chosen))}",
                f"{num(_mean([r['wer_quick'] for r in chosen]), 3)} / "
                f"{num(_mean([r['wer_whole'] for r in chosen]), 3)}",
                f"{sec(sum(r['underrun'] for r in chosen))} "
                f"(worst {sec(max(r['underrun'] for r in chosen))})",
                f"{sec(sum(r['underrun_before'] for r in chosen))} "
                f"(worst {sec(max(r['underrun_before'] for r in chosen))})",
            ]
        )
    return [
        table(
            [
                "sentences with",
                "first call, head / whole",
                "WER, head first / whole",
                "silence inside, now (sum)",
                "before: one cut, rest whole",
            ],
            table_rows,
        ),
        "“Silence inside”: the audio played from the first call's end while the next "
        "calls run; a call that ends after the audio in hand has played leaves a gap. "
        "For the verb set, “before” is the whole sentence in one call.\n",
    ]


DOOR = "Someone is at the front door."


def _bench(r: Record) -> list[str]:
    modes = r["modes"]
    rows = [
        [
            "`synthesize`" if mode == "non_streaming" else "streaming",
            f"{sec(m['first_mean'])} / {sec(m['first_p95'])}",
            sec(m["total_mean"]),
            sec(m["audio_mean"], 1),
            str(m["n"]),
            str(m["errors"]),
        ]
        for mode, m in modes.items()
    ]
    first = max(m["first_mean"] for m in modes.values())
    gap = modes["streaming"]["total_mean"] / modes["non_streaming"]["total_mean"]
    out = [
        f"#### C4. wyoming-bench 2026.10.0, 4 default texts × {r['rounds']} rounds, warm\n",
        table(["mode", "first audio mean / p95", "total mean", "audio", "runs", "errors"], rows),
        f"kokoro-onnx `create()` on the same texts (whole audio, model loaded): mean "
        f"{sec(r['kokoro_create_mean'])}. First audio mean ≤ 0.8 s in both modes: "
        f"{goal(first <= 0.8, 'goal')}; streaming total / `synthesize` total "
        f"{ratio(modes['streaming']['total_mean'], modes['non_streaming']['total_mean'])}: "
        f"{goal(gap <= 1.05, 'goal ≤ 1.05')}.\n",
    ]
    if "paired_total_ratio" in r:
        paired = r["paired_total_ratio"]
        out.append(
            "wyoming-bench runs all `synthesize` rounds before the streaming ones, so the "
            "VM's speed drift between minutes lands in that ratio. The same texts measured "
            "with its `measure_once`, the two modes back to back in alternating order: "
            f"streaming / `synthesize` total, median of {len(r['paired_ratios'])} pairs, "
            f"{num(paired, 2)}×: {goal(paired <= 1.05, 'goal ≤ 1.05')}.\n"
        )
    if "paired_first_mean" in r:
        firsts = r["paired_first_mean"]
        out.append(
            "First audio mean in those alternating runs: "
            f"{sec(firsts['non_streaming'])} `synthesize`, {sec(firsts['streaming'])} streaming: "
            f"{goal(max(firsts.values()) <= 0.8, 'goal ≤ 0.8 s')}.\n"
        )
    if "speed_probes" in r:
        before, between, after = r["speed_probes"]
        out.append(
            f"The VM's speed meanwhile: kokoro-onnx `create()` of “{DOOR}” took "
            f"{sec(before)} before wyoming-bench's run, {sec(between)} between it and the "
            f"alternating runs, {sec(after)} after them (median of 3 each).\n"
        )
    return out


def latency_sections(records: dict[str, Record]) -> list[str]:
    out = []
    for name, render in (
        ("cold_start", _cold),
        ("model_load", _load),
        ("first_phrase", _phrase),
        ("wyoming_bench", _bench),
    ):
        if r := result(records, name):
            out += render(r)
    if out:
        out.insert(0, "### C. Latency: the cold path, the first phrase, wyoming-bench\n")
    return out
