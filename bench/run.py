"""Benchmark wyoming-kokoro: the synthesis core against kokoro-onnx, and the real server.

    .venv/bin/python bench/run.py [--quick] [--only NAME ...] [--save]

Every scenario runs in a fresh Python process (this file with --scenario NAME); the
parent polls the RSS of that process and of its children (server, worker) every
50 ms, notes the CPU other processes use meanwhile, and prints markdown tables.
`--save` merges the results into bench/results.json and rewrites bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import procs
import report

BENCH = Path(__file__).resolve().parent
ORDER = (
    "text_cost",
    "core_rtf",
    "core_ttfa",
    "core_rss_kokoro",
    "core_rss_ours",
    "core_rss_bounded",
    "server_describe",
    "server_ttfa",
    "server_memory",
    "worker_growth",
    "concurrent",
    "sequence4",
    "clients4",
    "llm_stream",
    "cold_start",
    "model_load",
    "first_phrase",
    "wyoming_bench",
    "http_first_byte",
    "http_memory",
    "intelligibility",
    "voices_heard",
)
POLL_S = 0.05
Record = dict[str, Any]
Sample = tuple[float, dict[str, float]]


def scenarios() -> dict[str, Any]:
    """Every scenario by name: A (core), B (server), B9-B12 (load), C (latency), H (HTTP),
    J (what the judge hears)."""
    import scenarios_core
    import scenarios_heard
    import scenarios_http
    import scenarios_latency
    import scenarios_load
    import scenarios_server

    return {
        **scenarios_core.SCENARIOS,
        **scenarios_server.SCENARIOS,
        **scenarios_load.SCENARIOS,
        **scenarios_latency.SCENARIOS,
        **scenarios_http.SCENARIOS,
        **scenarios_heard.SCENARIOS,
    }


def run_in_process(name: str, quick: bool) -> None:
    """Child side: run one scenario and print its result as one JSON line."""
    print("RESULT " + json.dumps(scenarios()[name](quick)), flush=True)


def list_scenarios() -> None:
    """Each name with the first line of its docstring: the section it fills in RESULTS.md."""
    every = scenarios()
    for name in ORDER:
        doc = (every[name].__doc__ or "").strip().splitlines()
        print(f"{name:<16} {doc[0] if doc else ''}")


def _phases(samples: list[Sample], marks: dict[str, Record], end: float) -> dict[str, Record]:
    """Per phase (from one mark to the next): peak and median RSS of each role."""
    bounds = sorted((m["t"], name) for name, m in marks.items())
    phases: dict[str, Record] = {}
    for i, (begin, name) in enumerate(bounds):
        stop = bounds[i + 1][0] if i + 1 < len(bounds) else end
        inside = [s for t, s in samples if begin <= t <= stop]
        roles = {role for s in inside for role in s}
        phases[name] = {
            "peak": {r: max(s.get(r, 0.0) for s in inside) for r in roles},
            "median": {r: statistics.median(s.get(r, 0.0) for s in inside) for r in roles},
        }
    return phases


def run_scenario(name: str, quick: bool) -> Record:
    """Parent side: start the scenario process, poll it, collect its result."""
    command = [sys.executable, str(Path(__file__).resolve()), "--scenario", name]
    # A session of its own: if the runner is stopped, the scenario and the servers it
    # started are stopped with it (left running, they would load the next measurement).
    proc = subprocess.Popen(
        [*command, *(["--quick"] if quick else [])],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        return _watched(name, quick, proc)
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


def _watched(name: str, quick: bool, proc: subprocess.Popen[bytes]) -> Record:
    """Poll the scenario process to its end: RSS by role, others' CPU, its result."""
    started, date = time.monotonic(), datetime.now(timezone.utc)
    roles: dict[int, str] = {}
    marks: dict[str, Record] = {}
    result: Record = {}

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            if line.startswith("MARK "):
                rss = procs.rss_by_role(proc.pid, roles)
                marks[line[5:].strip()] = {"t": time.monotonic() - started, "rss": rss}
            elif line.startswith("RESULT "):
                result.update(json.loads(line[7:]))
            else:
                sys.stderr.write(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples: list[Sample] = []
    load_before = load_max = os.getloadavg()[0]
    ticks, ticked, others_cpu = procs.cpu_ticks(), started, 0.0
    while proc.poll() is None:
        samples.append((time.monotonic() - started, procs.rss_by_role(proc.pid, roles)))
        if time.monotonic() - ticked >= 1.0:
            now = procs.cpu_ticks()
            others_cpu += procs.cpu_used(ticks, now, {*procs.tree(proc.pid), os.getpid()})
            ticks, ticked = now, time.monotonic()
            load_max = max(load_max, os.getloadavg()[0])
        time.sleep(POLL_S)
    reader.join(10)
    seconds = time.monotonic() - started
    all_roles = {role for _, s in samples for role in s}
    return {
        "scenario": name,
        "quick": quick,
        "date": date.strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": seconds,
        "returncode": proc.returncode,
        "load_before": load_before,
        "load_max": load_max,
        "others_cores": others_cpu / max(seconds, 1e-9),
        "peak": {r: max(s.get(r, 0.0) for _, s in samples) for r in all_roles},
        "marks": {name: m["rss"] for name, m in marks.items()},
        "phases": _phases(samples, marks, seconds),
        "result": result,
    }


def save(records: dict[str, Record], machine: Record) -> dict[str, Record]:
    """Merge into bench/results.json (a re-run replaces its scenario) and write RESULTS.md."""
    path = BENCH / "results.json"
    saved = json.loads(path.read_text()) if path.is_file() else {}
    merged = {**saved.get("records", {}), **records}
    merged = {name: merged[name] for name in ORDER if name in merged}
    path.write_text(json.dumps({"machine": machine, "records": merged}, indent=1) + "\n")
    results = BENCH / "RESULTS.md"
    old = results.read_text() if results.is_file() else ""
    results.write_text(keep_written(old, report.render(machine, merged)))
    return merged


def keep_written(old: str, new: str) -> str:
    """`new` (rendered from results.json) with every section of `old` that it does not
    render put back before its Conditions: the notes written by hand (runs of
    bench/windows.py, bench/peer.py, scratch measurements) are not in results.json."""
    rendered = {line for line in new.splitlines() if line.startswith("### ")}
    kept, keeping = [], False
    for line in old.splitlines(keepends=True):
        if line.startswith("### "):
            keeping = line.rstrip("\n") not in rendered
        if keeping:
            kept.append(line)
    if not kept:
        return new
    at = new.find("### Conditions")
    at = len(new) if at < 0 else at
    return new[:at] + "".join(kept).rstrip("\n") + "\n\n" + new[at:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (3,000 chars, ...)")
    parser.add_argument("--only", nargs="+", choices=ORDER, metavar="NAME", help="run these")
    parser.add_argument("--save", action="store_true", help="update results.json, RESULTS.md")
    parser.add_argument("--list", action="store_true", help="name and section of each scenario")
    parser.add_argument("--scenario", choices=ORDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # Stopped by a signal, the runner ends its scenario first (see run_scenario).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.scenario:
        run_in_process(args.scenario, args.quick)
        return
    if args.list:
        list_scenarios()
        return
    machine = procs.machine()
    records: dict[str, Record] = {}
    names = [name for name in ORDER if not args.only or name in args.only]
    began = time.monotonic()
    for i, name in enumerate(names, 1):
        load = os.getloadavg()[0]
        print(f"[{i}/{len(names)}] {name} (load {load:.2f}) ...", file=sys.stderr, flush=True)
        records[name] = record = run_scenario(name, args.quick)
        status = "ok" if record["returncode"] == 0 and record["result"] else "FAILED"
        print(
            f"[{i}/{len(names)}] {name}: {status} in {record['seconds']:.0f} s, "
            f"others used {record['others_cores']:.2f} cores",
            file=sys.stderr,
            flush=True,
        )
    print(f"total {time.monotonic() - began:.0f} s", file=sys.stderr)
    shown = save(records, machine) if args.save else records
    print(report.render(machine, shown))


if __name__ == "__main__":
    main()
