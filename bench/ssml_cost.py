"""What parsing SSML costs the server, per 1,000 characters of document.

    .venv/bin/python bench/ssml_cost.py

Parse (defusedxml, walk, say-as) and parse + plan (the sentence pieces of every
segment, as the server queues them), against planning the same words as plain text.
Median of 20 runs each, on a 10,000-character document.
"""

from __future__ import annotations

import statistics
import time

from wyoming_kokoro.text.pieces import SentenceStream
from wyoming_kokoro.text.ssml import parse

UNIT = (
    "<s>The front door opened at <say-as interpret-as='time'>7:30 pm</say-as>.</s>"
    "<break time='300ms'/><prosody rate='slow'>Please check the "
    "<sub alias='Home Assistant'>HA</sub> log.</prosody> Code "
    "<say-as interpret-as='characters'>KQX</say-as>, the "
    "<say-as interpret-as='ordinal'>3</say-as> time. "
)


def _median_ms(run: object, repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    body = UNIT * (10_000 // len(UNIT))
    doc = f"<speak>{body}</speak>"
    words = " ".join(s.text for s in parse(doc) if hasattr(s, "text"))

    def plan_ssml() -> None:
        for segment in parse(doc):
            if hasattr(segment, "text"):
                SentenceStream("en").feed(segment.text)

    def plan_plain() -> None:
        stream = SentenceStream("en")
        stream.feed(words)
        stream.finish()

    per_k = 1000 / len(doc)
    parse_ms = _median_ms(lambda: parse(doc))
    ssml_ms = _median_ms(plan_ssml)
    plain_ms = _median_ms(plan_plain) * len(doc) / len(words)
    print(f"document: {len(doc)} chars, {len(words)} chars of words")
    print("| per 1,000 chars of SSML | ms |")
    print("|---|---|")
    print(f"| parse (defusedxml + walk) | {parse_ms * per_k:.2f} |")
    print(f"| parse + sentence pieces | {ssml_ms * per_k:.2f} |")
    scale = "for scale: plain text, sentence pieces, per 1,000 chars of words"
    print(f"| {scale} | {plain_ms * per_k:.2f} |")


if __name__ == "__main__":
    main()
