"""T: wyoming-bench's texts against our server and a peer server, in the same run.

    .venv/bin/python bench/peer.py --peer 'COMMAND --uri tcp://127.0.0.1:{port} …'
        [--peer-voice NAME] [--rounds N] [--whole]

Our server and the peer (any Wyoming TTS server: the command starts it on `{port}`)
run side by side, and with `--whole` our server with `--decode whole` too (the
whole-call path: no windows); each is warmed with one request. Then, per round, every one of
wyoming-bench 2026.10.0's four default texts is spoken in both of its modes
(`synthesize`, and the streaming sequence it sends sentence by sentence) by both
servers, with its `measure_once`, back to back in an order turned every round, so a
drift in this VM's speed lands on both alike. Prints per mode: first audio mean /
p95, total mean (the last audio, what a listener waits for the end), audio length,
and our figures over the peer's. A peer that reads the texts with other phonemes
speaks for longer or shorter: the total per second of audio is printed too.
Run it on a quiet machine: it says the load it saw.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import socket
import statistics
import subprocess
import time
from typing import Any

from client import VOICE, Server, percentile
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe
from wyoming.tts import SynthesizeVoice
from wyoming_bench.tts.client import measure_once
from wyoming_bench.tts.texts import DEFAULT_TEXTS

MODES = ("non_streaming", "streaming")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _answers(port: int) -> bool:
    try:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            return await asyncio.wait_for(client.read_event(), 2) is not None
    except (OSError, asyncio.TimeoutError):
        return False


def _start_peer(command: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    proc = subprocess.Popen(shlex.split(command.format(port=port)), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not asyncio.run(_answers(port)):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the peer did not answer describe on port {port}")
        time.sleep(0.2)
    return proc, port


async def _measure(port: int, mode: str, text: str, voice: str) -> Any:
    m = await measure_once(
        "127.0.0.1", port, mode, text, SynthesizeVoice(name=voice), None, 10, 120
    )
    if not m.ok:
        raise SystemExit(f"{mode} on port {port} failed: {m.error}")
    return m


def run(peer: str, peer_voice: str, rounds: int, whole: bool) -> dict[tuple[str, str], list[Any]]:
    proc, peer_port = _start_peer(peer)
    try:
        with contextlib.ExitStack() as stack:
            ports = {"ours": stack.enter_context(Server("--idle-timeout", "600")).port}
            if whole:
                server = Server("--idle-timeout", "600", "--decode", "whole")
                ports["ours, whole calls"] = stack.enter_context(server).port
            ports["peer"] = peer_port
            names = list(ports)
            voices = {name: peer_voice if name == "peer" else VOICE for name in names}
            got: dict[tuple[str, str], list[Any]] = {(n, m): [] for n in names for m in MODES}
            for name in names:  # warm: our worker loaded, the peer's first call made
                asyncio.run(_measure(ports[name], "non_streaming", DEFAULT_TEXTS[0], voices[name]))
            for number in range(rounds):
                order = names[number % len(names) :] + names[: number % len(names)]
                for text in DEFAULT_TEXTS:
                    for mode in MODES:
                        for name in order:
                            m = asyncio.run(_measure(ports[name], mode, text, voices[name]))
                            got[name, mode].append(m)
    finally:
        proc.terminate()
        proc.wait(10)
    return got


def report(got: dict[tuple[str, str], list[Any]]) -> None:
    print(
        "| mode | server | first audio mean / p95 | total mean | audio mean "
        "| total per s of audio |"
    )
    print("|---|---|---|---|---|---|")
    names = list(dict.fromkeys(name for name, _ in got))
    summary: dict[tuple[str, str], dict[str, float]] = {}
    for mode in MODES:
        for name in names:
            ms = got[name, mode]
            first = [m.ttft_s for m in ms]
            s = summary[name, mode] = {
                "first": statistics.fmean(first),
                "p95": percentile(first, 95),
                "total": statistics.fmean(m.total_s for m in ms),
                "audio": statistics.fmean(m.audio_duration_s for m in ms),
            }
            s["per_s"] = s["total"] / s["audio"]
            print(
                f"| {mode} | {name} | {s['first']:.2f} / {s['p95']:.2f} s | {s['total']:.2f} s "
                f"| {s['audio']:.2f} s | {s['per_s']:.3f} |"
            )
    print("\nOver the peer's:\n")
    print("| mode | server | first audio | total | total per s of audio |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        peer = summary["peer", mode]
        for name in names[:-1]:
            ours = summary[name, mode]
            first, total = ours["first"] / peer["first"], ours["total"] / peer["total"]
            per_s = ours["per_s"] / peer["per_s"]
            print(f"| {mode} | {name} | {first:.2f}× | {total:.2f}× | {per_s:.2f}× |")
    print(f"\nPer text, total mean ({' / '.join(names)}):\n")
    for mode in MODES:
        for text in DEFAULT_TEXTS:
            per = [
                statistics.fmean(m.total_s for m in got[name, mode] if m.text == text)
                for name in names
            ]
            print(f"- {mode}, “{text[:40]}…”: {' / '.join(f'{t:.2f}' for t in per)} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer", required=True, help="the peer's command; {port} is filled in")
    parser.add_argument("--peer-voice", default=VOICE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="ours with --decode whole too")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    got = run(args.peer, args.peer_voice, args.rounds, args.whole)
    print(f"Load before: {load:.2f}; after: {os.getloadavg()[0]:.2f}. Rounds: {args.rounds}.\n")
    report(got)


if __name__ == "__main__":
    main()
