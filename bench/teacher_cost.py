"""V2: what a voice teacher running beside costs a listener, in-process, one run.

    .venv/bin/python bench/teacher_cost.py [--sentences N]

The server starts the teacher (`python -m wyoming_kokoro.synthesis.teaching`) at the
lowest priority Linux has (nice 19, SCHED_IDLE) while voices are left to teach. Here
the engine speaks held-out sentences as a listener's first call, each twice in turn:
once with the teacher stopped (SIGSTOP) and once with it teaching. First audio and the
whole call, medians and ratios. A cache of the run's own, so everything is taught
afresh there and nothing reaches the user's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.run_cache import remove, use_run_cache
from texts import HELD_OUT_JA

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import teaching
from wyoming_kokoro.synthesis.engine import Engine

VOICE = "jm_kumo"


def lowest() -> None:
    os.nice(19)
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def first_call(engine: Engine, text: str) -> tuple[float, float]:
    call = engine.plan(text, engine.voice(VOICE), awaited=True)[0]
    started, first = time.perf_counter(), None
    for pcm, _ in engine.stream(call):
        if first is None and len(pcm):
            first = time.perf_counter() - started
    return first or 0.0, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=8)
    args = parser.parse_args()
    run = use_run_cache()
    try:
        measure(args.sentences)
    finally:
        if run is not None:
            remove(run)


def measure(sentences: int) -> None:
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    engine = Engine(resolve(None, None, []), EngineSettings(threads=2))
    engine.warm_up()
    teaching.teach(engine, VOICE)  # the listener's voice is taught; the teacher does the rest
    teacher = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro.synthesis.teaching"],
        stderr=subprocess.DEVNULL,
        preexec_fn=lowest,
    )
    time.sleep(5)  # loaded and teaching
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    try:
        for text in HELD_OUT_JA[:sentences]:
            for busy in (False, True):
                teacher.send_signal(signal.SIGCONT if busy else signal.SIGSTOP)
                time.sleep(1.0)
                times[busy].append(first_call(engine, text))
        still = teacher.poll() is None
    finally:
        teacher.send_signal(signal.SIGCONT)
        teacher.terminate()
        teacher.wait()
    print(f"teacher still teaching at the end: {still}\n")
    print("| | teacher stopped | teacher teaching | ratio |")
    print("|---|---|---|---|")
    for index, name in ((0, "first audio, s"), (1, "whole first call, s")):
        alone = statistics.median(t[index] for t in times[False])
        beside = statistics.median(t[index] for t in times[True])
        ratio = beside / alone
        print(f"| {name} (median of {sentences}) | {alone:.3f} | {beside:.3f} | {ratio:.2f}× |")
    print(f"\nload after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
