"""Markdown tables for the server scenarios (B5-B9)."""

from __future__ import annotations

from collections.abc import Callable

from fmt import Record, goal, mb, num, ratio, result, sec, table


def _describe(r: Record) -> list[str]:
    rows = [
        [
            label,
            str(d["n"]),
            num(d["p50"], 1, " ms"),
            num(d["p99"], 1, " ms"),
            num(d["max"], 1, " ms"),
            goal(d["max"] < 1000, "< 1,000 ms (HA)"),
        ]
        for label, d in (
            ("idle (no worker yet)", r["idle"]),
            ("during a long synthesis", r["busy"]),
        )
    ]
    note = "" if r["busy_whole_time"] else " (**the synthesis ended before the last describe**)"
    return [
        "#### B5. `describe` latency, new connection each\n",
        table(["while", "describes", "p50", "p99", "max", "goal"], rows),
        f"First describe after start-up: {num(r['first_ms'], 1, ' ms')}{note}.\n",
    ]


def _ttfa(r: Record, core: Record) -> list[str]:
    rows = []
    for label, text in (("short", "short"), ("long", "long")):
        for mode, name in (("synth", "`synthesize`"), ("stream", "streaming")):
            cold, warm = r[f"cold_{label}_{mode}"], r[f"warm_{label}_{mode}"]
            base = core.get(f"ours_{label}")
            chars = f"{core[f'{label}_chars']:,} chars" if core else text
            rows.append(
                [
                    chars,
                    name,
                    sec(cold["first_audio"]),
                    sec(warm["first_audio"]),
                    sec(base),
                    ratio(warm["first_audio"], base, 1),
                    sec(warm["end"], 1),
                    sec(warm["audio_s"], 1),
                    str(cold["errors"] + warm["errors"]),
                ]
            )
    return [
        "#### B6. Time to first audio-chunk over Wyoming (median)\n",
        table(
            [
                "text",
                "HA call",
                "cold (fresh server)",
                "warm",
                "core in-process",
                "warm / core",
                "warm: all audio",
                "audio",
                "errors",
            ],
            rows,
        ),
        "Cold includes starting the worker process and loading the model; the client "
        "clock starts before it connects. Streaming sends 7-character chunks, the "
        "compat `synthesize`, then `synthesize-stop`.\n",
    ]


def _memory(rec: Record) -> list[str]:
    r, peak = rec["result"], rec["peak"]
    start, after, loaded = r["start"], r["after"], r["loaded"]
    change = (after - start) / start * 100 if start and after else None
    total = (loaded["server"] or 0) + (loaded["worker"] or 0)
    rows = [
        ["before first use", mb(start), "–", mb(start)],
        [
            "worker loaded (after a ~600-char request)",
            mb(loaded["server"]),
            mb(loaded["worker"]),
            mb(total),
        ],
        ["peak (50 ms poll)", mb(peak.get("server")), mb(peak.get("worker")), "–"],
        [
            f"after idle unload (worker gone after {sec(r['unload_s'], 1)})",
            mb(after),
            "–",
            mb(after),
        ],
    ]
    ok = change is not None and abs(change) <= 10 and after <= 80 and r["unloaded"]
    return [
        "#### B7. Server RSS (`--idle-timeout 3`)\n",
        table(["", "server", "worker", "total"], rows),
        f"After unload vs start: {num(change, 1, '%')}; "
        f"{goal(ok, 'goal: within 10 % of start, server ≤ 80 MB')}.\n",
    ]


def _growth(r: Record) -> list[str]:
    points = {int(k): v for k, v in r["points"].items()}
    rows = [[str(i), mb(p["worker"]), mb(p["server"])] for i, p in sorted(points.items())]
    first, last = points[10], points[r["count"]]
    growth = (last["worker"] - first["worker"]) / first["worker"] * 100
    same = len({p["worker_pid"] for p in points.values()}) == 1
    return [
        f"#### B8. Worker RSS over {r['count']} sequential short requests\n",
        table(["after request", "worker", "server"], rows),
        f"Worker growth from request 10 to {r['count']}: {num(growth, 1, '%')} "
        f"({goal(growth <= 5, 'goal ≤ 5 %')}); same worker throughout: "
        f"{'yes' if same else 'no'}; failed requests: {r['errors']}.\n",
    ]


def _concurrent(r: Record) -> list[str]:
    rows = []
    for mode, name in (("stream", "streaming"), ("synth", "`synthesize`")):
        c = r[mode]
        rows.append(
            [
                name,
                f"{sec(c.get('alone_first_audio'))} / {sec(c['alone_end'])}",
                f"{sec(c['first_audio'])} ({ratio(c['first_audio'], c.get('alone_first_audio'))})",
                sec(c["end"]),
                f"{sec(c['audio_s'], 1)} / {sec(c['alone_audio_s'], 1)}",
                str(c["errors"]),
                "yes" if c["article_still_speaking"] else "no",
            ]
        )
    return [
        f"#### B9. Announcement 0.5 s after a {r['article_chars']:,}-char article (two clients)\n",
        table(
            [
                "HA call",
                "announcement alone: first audio / done",
                "with article: first audio (× alone)",
                "with article: done",
                "audio (with / alone)",
                "errors",
                "article still speaking",
            ],
            rows,
        ),
        "Done = audio-stop (`synthesize`) or synthesize-stopped (streaming). Peers: "
        "35–38 s when they serialise, 1.8 s for the best.\n",
        *_concurrent_cold(r),
    ]


def _concurrent_cold(r: Record) -> list[str]:
    c = r.get("cold_stream")
    if not c:
        return []
    times = ratio(c["first_audio"], c["alone_first_audio"])
    warm = max(r[m]["first_audio"] / r[m]["alone_first_audio"] for m in ("stream", "synth"))
    return [
        f"Cold server, streaming: the announcement's first audio {sec(c['first_audio'])} behind "
        f"the article, {sec(c['alone_first_audio'])} alone ({times}); goals: within 1.5× "
        f"alone warm ({goal(warm <= 1.5, 'goal')}), 2× cold "
        f"({goal(c['first_audio'] <= 2 * c['alone_first_audio'], 'goal')}).\n"
    ]


def server_sections(records: dict[str, Record]) -> list[str]:
    sections: list[tuple[str, Callable[[Record], list[str]]]] = [
        ("server_describe", lambda rec: _describe(rec["result"])),
        ("server_ttfa", lambda rec: _ttfa(rec["result"], result(records, "core_ttfa"))),
        ("server_memory", _memory),
        ("worker_growth", lambda rec: _growth(rec["result"])),
        ("concurrent", lambda rec: _concurrent(rec["result"])),
    ]
    out: list[str] = []
    for name, render in sections:
        if result(records, name):
            out += render(records[name])
    return out
