"""C5: first audio for other voices than the default, cold and warm, over Wyoming.

    .venv/bin/python bench/voice_first_audio.py [--rounds N]

One real server (`--idle-timeout 1`, the user's cache: voices taught there as the
server's teacher left them). Each round, for each voice in turn: a `synthesize` of
one short sentence right after the worker has unloaded (cold), then the same again
(warm). Prints the median first audio per voice and its ratio to the default voice's
in the same run, and the load it saw. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics

from client import Server, request

DOOR = "Someone is at the front door."
VOICES = ("jm_kumo", "jf_alpha", "jf_tebukuro", "jf_gongitsune(1)+jm_kumo(1)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("load before: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    first: dict[tuple[str, str], list[float]] = {}
    with Server("--idle-timeout", "1") as server:
        for _ in range(args.rounds):
            for voice in VOICES:
                assert server.wait_for(lambda: server.workers() == [], 30)
                for kind in ("cold", "warm"):
                    heard = asyncio.run(request(server.uri, DOOR, False, voice_name=voice))
                    first.setdefault((voice, kind), []).append(heard.first_audio or float("nan"))
    base = {kind: statistics.median(first[(VOICES[0], kind)]) for kind in ("cold", "warm")}
    print("\n| voice | cold first audio, s | ratio | warm first audio, s | ratio |")
    print("|---|---|---|---|---|")
    for voice in VOICES:
        cold, warm = (statistics.median(first[(voice, k)]) for k in ("cold", "warm"))
        print(
            f"| {voice} | {cold:.2f} | {cold / base['cold']:.2f}× "
            f"| {warm:.2f} | {warm / base['warm']:.2f}× |"
        )
    print(f"\n{args.rounds} rounds; load after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
