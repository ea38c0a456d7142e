"""O: a paragraph on one core and one thread, against two cores, through the server.

    .venv/bin/python bench/one_core.py [--rounds N]

A real server under `taskset -c 0` with `--threads 1` (a Raspberry Pi-like share of
the machine: the worker inherits the affinity) and one with the machine's defaults,
side by side, each warmed with one request, then asked in turn. Each speaks, per
round: a 596-character paragraph and a 1,478-character answer sent whole
(`synthesize`), and a 608-character LLM answer streamed at 30 characters every 50 ms
(the compat `synthesize` and `synthesize-stop` after it, as Home Assistant sends
them). Prints first audio, the silence a player starting at the first audio would
hear (summed, and the longest wait), the end and the audio's length. Run it on a
quiet machine: it says the load it saw.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics

from client import Heard, Server, request
from texts import ANSWER_1500, ENGLISH_600, LLM_ANSWER

LLM_CHUNK_CHARS = 30
LLM_CHUNK_EVERY = 0.05
SETUPS = {
    "one core, 1 thread": (["taskset", "-c", "0"], ["--threads", "1"]),
    "two cores, defaults": ([], []),
}
CASES = {
    "596 chars, `synthesize`": (ENGLISH_600, False),
    "1,478 chars, `synthesize`": (ANSWER_1500, False),
    "608 chars streamed as an LLM writes": (LLM_ANSWER, True),
}


def _speak(uri: str, text: str, streaming: bool) -> Heard:
    every = LLM_CHUNK_EVERY if streaming else 0.0
    return asyncio.run(
        request(uri, text, streaming, chunk_chars=LLM_CHUNK_CHARS, chunk_every=every)
    )


def run(rounds: int) -> dict[tuple[str, str], list[Heard]]:
    got: dict[tuple[str, str], list[Heard]] = {}
    with contextlib.ExitStack() as stack:
        uris = {}
        for setup, (wrapper, args) in SETUPS.items():
            server = stack.enter_context(Server("--idle-timeout", "600", *args, wrapper=wrapper))
            uris[setup] = server.uri
            _speak(server.uri, "Someone is at the front door.", False)  # loads the worker
        # Request by request in turn (one server idles while the other speaks): a drift
        # in the VM's speed lands on both.
        for number in range(rounds):
            for case, (text, streaming) in CASES.items():
                order = list(SETUPS)[:: 1 if number % 2 == 0 else -1]
                for setup in order:
                    got.setdefault((setup, case), []).append(_speak(uris[setup], text, streaming))
    return dict(sorted(got.items(), key=lambda item: list(SETUPS).index(item[0][0])))


def report(got: dict[tuple[str, str], list[Heard]]) -> None:
    print(
        "| setup | text | first audio (median) | silence inside: summed / longest (max) "
        "| end | audio |"
    )
    print("|---|---|---|---|---|---|")
    for (setup, case), runs in got.items():
        first = statistics.median(h.first_audio or float("nan") for h in runs)
        silent = max(h.silent for h in runs)
        longest = max(h.longest_gap for h in runs)
        end = statistics.median(h.end or float("nan") for h in runs)
        audio = statistics.median(h.audio_seconds for h in runs)
        errors = sum(h.errors for h in runs)
        note = f" ({errors} errors)" if errors else ""
        print(
            f"| {setup} | {case} | {first:.2f} s | {silent:.2f} / {longest:.2f} s "
            f"| {end:.1f} s | {audio:.1f} s{note} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    got = run(args.rounds)
    print(f"Load before: {load:.2f}; after: {os.getloadavg()[0]:.2f}. Rounds: {args.rounds}.\n")
    report(got)


if __name__ == "__main__":
    main()
