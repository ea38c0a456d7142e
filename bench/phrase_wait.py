"""P: a streamed first sentence, its opening phrase cut at once or waited for.

    .venv/bin/python bench/phrase_wait.py [--sentences N] [--waits 0 0.4]

A real server per `--phrase-wait` value, the real `wyoming` client streaming each
held-out sentence as an LLM writes it (8-character deltas cut mid-word) at three
paces, then the compat `synthesize` and `synthesize-stop`, as Home Assistant does.
Prints per pace and wait: first audio (from the first delta), the silence a player
starting at the first audio would hear, and what the Whisper judge heard (WER against
the sentence). The judge runs after every server has stopped, so it does not weigh
on the timings. Run it on a quiet machine: it says the load it saw.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from client import Heard, Server, request
from support.judge import heard, wer
from texts import HELD_OUT, SENTENCES

from wyoming_kokoro.options import PHRASE_WAIT

CHUNK_CHARS = 8  # an LLM delta: about two tokens
# Characters a second: cloud LLMs, local ones on a GPU, a local one on a CPU.
PACES = {"600 chars/s": 600.0, "240 chars/s": 240.0, "120 chars/s": 120.0, "30 chars/s": 30.0}


def run(waits: list[float], sentences: tuple[str, ...]) -> dict[tuple[str, float], list[Heard]]:
    got: dict[tuple[str, float], list[Heard]] = {}
    for wait in waits:
        with Server("--idle-timeout", "600", "--phrase-wait", str(wait)) as server:
            asyncio.run(request(server.uri, SENTENCES[0], False))  # loads the worker
            for pace_name, pace in PACES.items():
                every = CHUNK_CHARS / pace
                got[pace_name, wait] = [
                    asyncio.run(
                        request(server.uri, text, True, chunk_chars=CHUNK_CHARS, chunk_every=every)
                    )
                    for text in sentences
                ]
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=len(HELD_OUT))
    parser.add_argument("--waits", type=float, nargs="+", default=[0.0, PHRASE_WAIT.default])
    args = parser.parse_args()
    sentences = HELD_OUT[: args.sentences]
    load = os.getloadavg()[0]
    got = run(args.waits, sentences)
    print(f"Load before: {load:.2f}; after: {os.getloadavg()[0]:.2f}. {len(sentences)} sentences.")
    print()
    print(
        "| LLM pace | --phrase-wait | first audio, median / max | silence inside, "
        "median / max | WER | errors |"
    )
    print("|---|---|---|---|---|---|")
    for (pace_name, wait), runs in got.items():
        firsts = [(h.first_audio or float("nan")) - (h.first_chunk or 0.0) for h in runs]
        silent = [h.silent for h in runs]
        errors = [wer(text, heard(bytes(h.pcm))) for text, h in zip(sentences, runs, strict=True)]
        print(
            f"| {pace_name} | {wait:g} s | {statistics.median(firsts):.2f} / {max(firsts):.2f} s "
            f"| {statistics.median(silent):.2f} / {max(silent):.2f} s "
            f"| {statistics.mean(errors):.3f} | {sum(h.errors for h in runs)} |"
        )


if __name__ == "__main__":
    main()
