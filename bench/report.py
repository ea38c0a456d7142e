"""Markdown tables from the scenario records (see run.py)."""

from __future__ import annotations

from fmt import Record, goal, mb, num, ratio, sec, speech, table
from report_heard import heard_sections
from report_http import http_sections
from report_latency import latency_sections
from report_load import load_sections
from report_server import server_sections


def _core(records: dict[str, Record]) -> list[str]:
    out = []
    if r := records.get("core_rtf", {}).get("result"):
        rel = r["ours_rtf"] / r["kokoro_rtf"]
        rows = [
            ["RTF, median", num(r["ours_rtf"]), num(r["kokoro_rtf"]),
             ratio(r["ours_rtf"], r["kokoro_rtf"])],
            ["RTF, best", num(r.get("ours_best_rtf")), num(r.get("kokoro_best_rtf")),
             ratio(r.get("ours_best_rtf"), r.get("kokoro_best_rtf"))],
            ["synthesis time, median", sec(r["ours_wall"]), sec(r["kokoro_wall"]),
             ratio(r["ours_wall"], r["kokoro_wall"])],
            ["audio length", sec(r["ours_audio"], 1), sec(r["kokoro_audio"], 1), ""],
        ]  # fmt: skip
        out += [
            f"#### A1. Real-time factor, {r['chars']} characters ({r['reps']} runs each)\n",
            table(["", "ours (core)", "kokoro-onnx `create()`", "ours / kokoro-onnx"], rows),
            f"Median RTF ratio {num(rel)}: {goal(rel <= 1.05, 'goal ≤ 1.05')}.\n",
        ]
    if r := records.get("core_ttfa", {}).get("result"):
        rows = [
            [
                f"{r[f'{label}_chars']:,} chars",
                f"{sec(r[f'ours_{label}'])} ({sec(r[f'ours_{label}_first_audio_s'], 1)} of audio)",
                f"{sec(r[f'kokoro_{label}'])} "
                f"({sec(r[f'kokoro_{label}_first_audio_s'], 1)} of audio)",
                ratio(r[f"kokoro_{label}"], r[f"ours_{label}"], 1),
            ]
            for label in ("short", "long")
        ]
        out += [
            "#### A2. Time to first audio, in-process (median)\n",
            table(
                ["text", "ours: first piece", "kokoro-onnx `create_stream`", "ours sooner by"], rows
            ),
        ]
    ours = records.get("core_rss_ours", {})
    bounded = records.get("core_rss_bounded", {})
    base = records.get("core_rss_kokoro", {})
    if ours.get("result") or bounded.get("result") or base.get("result"):
        rows = []
        for label, rec, target in (
            ("ours: core (split_text + speak)", ours, "≤ 300 MB"),
            ("ours, `--max-decode-seconds 2.5`", bounded, "≤ 300 MB"),
            ("kokoro-onnx: one `create()`", base, "peers ~700 MB"),
        ):
            if not (r := rec.get("result")):
                continue
            phase = rec["phases"].get("loaded", {})
            peak = rec["peak"].get("scenario")
            check = goal(peak <= 300, target) if rec is not base else target
            rows.append(
                [
                    label,
                    f"{r['chars']:,} chars",
                    speech(r["audio_s"]),
                    mb(rec["marks"]["loaded"].get("scenario")),
                    mb(phase.get("median", {}).get("scenario")),
                    mb(peak),
                    mb(r["ru_maxrss_mb"]),
                    check,
                ]
            )
        out += [
            "#### A3. Peak RSS of the whole process\n",
            table(
                [
                    "run",
                    "text",
                    "speech",
                    "loaded",
                    "median while speaking",
                    "peak (50 ms poll)",
                    "peak (kernel)",
                    "goal",
                ],
                rows,
            ),
        ]
        if r := ours.get("result"):
            out.append(
                f"Ours spoke {r['pieces']:,} pieces in {speech(r['wall_s'])} "
                f"(RTF {num(r['rtf'])}){' — quick mode' if ours['quick'] else ''}.\n"
            )
    if r := records.get("text_cost", {}).get("result"):
        rows = [
            [
                f"{r[f'{k}_chars']:,} chars",
                num(r[f"{k}_normalize_ms"], 1, " ms"),
                num(r[f"{k}_split_ms"], 1, " ms"),
            ]
            for k in ("answer", "long")
        ]
        out += [
            "#### A4. Text processing cost per 1,000 characters\n",
            table(["text", "normalize", "split_text"], rows),
        ]
    return out


def render(machine: Record, records: dict[str, Record]) -> str:
    dates = sorted(rec["date"] for rec in records.values())
    minutes = sum(rec["seconds"] for rec in records.values()) / 60
    quick = any(rec["quick"] for rec in records.values())
    out = [
        "## Benchmarks\n",
        f"{dates[0][:10] if dates else '?'}; CPU {machine['cpu']}, {machine['cores']} cores; "
        f"onnxruntime {machine['onnxruntime']}, kokoro-onnx {machine['kokoro_onnx']}, "
        f"Python {machine['python']}; {machine['threads']} threads; voice jm_kumo, int8 "
        f"model, English text. {'Quick mode. ' if quick else ''}Each scenario ran in a fresh "
        f"process ({num(minutes, 0)} min in all); ratios compare with a baseline measured in "
        "the same run. Reproduce with `.venv/bin/python bench/run.py`.\n",
        "### A. Synthesis core vs kokoro-onnx (in-process, model loaded and warmed)\n",
        *_core(records),
        "### B. Server over Wyoming (real server, real `wyoming` client, 127.0.0.1)\n",
        *server_sections(records),
        *load_sections(records),
        *latency_sections(records),
        *http_sections(records),
        *heard_sections(records),
        "### Conditions\n",
        table(
            [
                "scenario",
                "started",
                "run time",
                "load before",
                "max load (1 min)",
                "CPU used by other processes",
                "result",
            ],
            [
                [
                    name,
                    rec["date"],
                    speech(rec["seconds"]),
                    num(rec["load_before"]),
                    num(rec["load_max"]),
                    num(rec["others_cores"], 2, " cores"),
                    "ok" if rec["returncode"] == 0 and rec["result"] else "**failed**",
                ]
                for name, rec in records.items()
            ],
        ),
    ]
    return "\n".join(out)
