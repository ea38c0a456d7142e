"""Markdown tables for the load scenarios (B10-B12)."""

from __future__ import annotations

from collections.abc import Callable

from fmt import Record, goal, mb, num, ratio, result, sec, table


def _excerpt(text: str, chars: int = 36) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _times(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _sequence(r: Record) -> list[str]:
    rows = [
        [
            f"“{_excerpt(q['text'])}” ({q['chars']} chars)",
            sec(q["first_audio"]),
            sec(q["end"]),
            sec(q["audio_s"], 1),
            num(q["end"] / q["audio_s"]) if q["audio_s"] else "–",
            sec(q["kokoro_wall"]),
            ratio(q["first_audio"], q["kokoro_wall"]),
            ratio(q["end"], q["kokoro_wall"]),
            str(q["errors"]),
        ]
        for q in r["requests"]
    ]
    return [
        "#### B10. Four short announcements in sequence, warm server "
        f"({_times(r['rounds'], 'round')}, median)\n",
        table(
            [
                "text",
                "first audio",
                "done",
                "audio",
                "RTF (done / audio)",
                "kokoro-onnx `create()`",
                "first audio / kokoro-onnx",
                "done / kokoro-onnx",
                "errors",
            ],
            rows,
        ),
        "Each request is what HA sends for a whole message to a streaming server: "
        "synthesize-start, one chunk with the text, the compat `synthesize`, synthesize-stop, "
        "on a new connection; done = synthesize-stopped. kokoro-onnx gives all of its audio "
        "at once, so its first audio is its done.\n",
    ]


def _clients(rec: Record) -> list[str]:
    r = rec["result"]
    rows = [
        [
            str(i),
            f"“{_excerpt(c['text'])}” ({c['chars']} chars)",
            sec(c["first_audio"]),
            sec(c["end"]),
            sec(c["audio_s"], 1),
            sec(c["kokoro_wall"]),
            ratio(c["end"], c["kokoro_wall"], 1),
            str(c["errors"]),
        ]
        for i, c in enumerate(r["clients"], 1)
    ]
    d = r["describe"]
    peak = rec.get("phases", {}).get("load", {}).get("peak", {})
    server, worker = peak.get("server"), peak.get("worker")
    both = server + worker if server is not None and worker is not None else None
    return [
        f"#### B11. Four clients at once ({_times(r['rounds'], 'burst')}, median)\n",
        table(
            [
                "client",
                "text",
                "first audio",
                "done",
                "audio",
                "kokoro-onnx `create()` alone",
                "done / kokoro-onnx alone",
                "errors",
            ],
            rows,
        ),
        f"All four done after {sec(r['makespan'])}; kokoro-onnx `create()` on the four texts "
        f"one after another: {sec(r['kokoro_serial'])} "
        f"({ratio(r['makespan'], r['kokoro_serial'])}).\n",
        table(
            ["5th client during the load", "describes", "p50", "p99", "max", "goal"],
            [
                [
                    "`describe`, new connection every 0.1 s",
                    str(d["n"]),
                    num(d["p50"], 1, " ms"),
                    num(d["p99"], 1, " ms"),
                    num(d["max"], 1, " ms"),
                    goal(d["max"] < 1000, "< 1,000 ms (HA)"),
                ]
            ],
        ),
        f"Peak RSS during the bursts (50 ms poll): server {mb(server)}, worker {mb(worker)}, "
        f"sum of the two peaks {mb(both)}.\n",
    ]


def _llm(r: Record) -> list[str]:
    llm = r["llm_s"]
    rows = [
        [
            "streaming (HA's sequence)",
            sec(r["stream_first_audio"]),
            sec(r["stream_end"], 1),
            sec(r["stream_stop_to_stopped"], 1),
            sec(r["stream_audio_s"], 1),
        ],
        [
            "`synthesize` after the last chunk",
            sec(r["synth_first_audio"]),
            sec(r["synth_end"], 1),
            "–",
            sec(r["synth_audio_s"], 1),
        ],
        [
            "kokoro-onnx `create_stream` after the last chunk",
            f"{sec(r['kokoro_stream_first_audio'])} ({sec(r['kokoro_stream_first_s'], 1)} "
            "of audio)",
            "–",
            "–",
            "–",
        ],
        [
            "kokoro-onnx `create()` after the last chunk",
            sec(r["kokoro_end"]),
            sec(r["kokoro_end"], 1),
            "–",
            sec(r["kokoro_audio_s"], 1),
        ],
    ]
    return [
        f"#### B12. A {r['chars']}-char LLM answer as HA streams it "
        f"({_times(r['reps'], 'run')}, median)\n",
        table(
            [
                "run",
                "first audio",
                "all audio sent",
                "synthesize-stop → stopped",
                "audio",
            ],
            rows,
        ),
        "Times count from the first chunk. "
        f"The LLM sends {r['chunks']} chunks of up to 30 characters "
        f"(cut mid-word, markdown included), one every 50 ms: {sec(llm)} from the first to "
        "the last, then the compat `synthesize` and synthesize-stop. The non-streaming rows "
        "ran on their own and are shifted by that time. Streaming's first audio comes "
        f"{sec(r['synth_first_audio'] - r['stream_first_audio'])} sooner than `synthesize`'s "
        f"({ratio(r['synth_first_audio'], r['stream_first_audio'])}); errors: {r['errors']}. "
        "kokoro-onnx reads the markdown as it is.\n",
    ]


def load_sections(records: dict[str, Record]) -> list[str]:
    sections: list[tuple[str, Callable[[Record], list[str]]]] = [
        ("sequence4", lambda rec: _sequence(rec["result"])),
        ("clients4", _clients),
        ("llm_stream", lambda rec: _llm(rec["result"])),
    ]
    out: list[str] = []
    for name, render in sections:
        if result(records, name):
            out += render(records[name])
    return out
