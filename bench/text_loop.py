"""Event-loop time of sentence splitting: what `SentenceStream` costs the server's loop.

    .venv/bin/python bench/text_loop.py [--old FILE] [--rows NAME ...]

The Wyoming handler and the HTTP side split text on the event loop, so every
millisecond here is a millisecond no other client is answered (Home Assistant gives
`describe` one second). Each row feeds one text, whole or in 5-character chunks as
an LLM stream arrives, and reports the time spent inside `feed`/`finish`, that time
per 1,000 characters, the longest single call, and how many characters were handed
to the sentence segmenter (pysbd) against the length of the text.

`--old FILE` measures another version of `wyoming_kokoro/text/pieces.py` instead, e.g. one
written out with `git show REV:wyoming_kokoro/text/pieces.py > FILE`, for a before/after.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pysbd

CHUNK = 5

_SENTENCES = (
    "The living room is at twenty one degrees and the kitchen is slightly cooler. "
    "Upstairs, the bedrooms are warming up because the heating switched to evening mode. "
    "The humidity in the bathroom is still high, so the fan keeps running for a while. "
    "Dr. Smith called at 5 p.m. and asked you to call back tomorrow morning! "
)


def _run_on(size: int) -> str:
    """One long sentence with a colon near its start: a list an LLM writes on one line."""
    words = "flour, sugar and eggs, then butter; milk or cream, a pinch of salt, "
    text = "You will need the following: "
    while len(text) < size:
        text += words
    return text[:size]


def _answer(size: int) -> str:
    text = ""
    while len(text) < size:
        text += _SENTENCES
    return text[:size]


# name → (text, streamed in chunks?)
ROWS: dict[str, Callable[[], tuple[str, bool]]] = {
    "answer 1.5k, streamed": lambda: (_answer(1_500), True),
    "answer 10k, streamed": lambda: (_answer(10_000), True),
    "run-on ': ' 1.5k, streamed": lambda: (_run_on(1_500), True),
    "run-on ': ' 3k, streamed": lambda: (_run_on(3_000), True),
    "run-on ': ' 20k, streamed": lambda: (_run_on(20_000), True),
    "answer 40k, one line, whole": lambda: (_answer(40_000), False),
    "run-on 40k, one line, whole": lambda: (_run_on(40_000), False),
    "answer 100k, one line, whole": lambda: (_answer(100_000), False),
}


def _load(path: str | None) -> ModuleType:
    if path is None:
        from wyoming_kokoro.text import pieces as text

        return text
    # Named inside the package so that its relative imports resolve.
    spec = importlib.util.spec_from_file_location("wyoming_kokoro._bench_text", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(text_module: ModuleType, text: str, streamed: bool) -> dict[str, Any]:
    stream = text_module.SentenceStream("en")
    handed = 0
    segment = pysbd.Segmenter.segment

    def counting(segmenter: pysbd.Segmenter, window: str) -> list:
        nonlocal handed
        handed += len(window)
        return segment(segmenter, window)

    # Counted on pysbd's side: the stream keeps its segmenter to itself.
    pysbd.Segmenter.segment = counting  # type: ignore[method-assign]
    chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] if streamed else [text]
    total = longest = 0.0
    pieces = 0
    try:
        for call in [*(lambda c=c: stream.feed(c) for c in chunks), stream.finish]:
            start = time.perf_counter()
            pieces += len(call())
            spent = time.perf_counter() - start
            total += spent
            longest = max(longest, spent)
    finally:
        pysbd.Segmenter.segment = segment  # type: ignore[method-assign]
    return {
        "chars": len(text),
        "loop_s": total,
        "per_1k_ms": 1000 * total / (len(text) / 1000),
        "longest_ms": 1000 * longest,
        "handed": handed,
        "pieces": pieces,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", metavar="FILE", help="measure this text.py instead")
    parser.add_argument("--rows", nargs="*", choices=list(ROWS), help="only these rows")
    args = parser.parse_args()
    module = _load(args.old)
    print("| text | chars | loop time (s) | per 1,000 chars (ms) | longest call (ms) |", end="")
    print(" chars to segmenter | × text | pieces |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.rows or ROWS:
        text, streamed = ROWS[name]()
        r = measure(module, text, streamed)
        print(
            f"| {name} | {r['chars']:,} | {r['loop_s']:.3f} | {r['per_1k_ms']:.1f} "
            f"| {r['longest_ms']:.1f} | {r['handed']:,} | {r['handed'] / r['chars']:.1f} "
            f"| {r['pieces']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
