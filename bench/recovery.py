"""How soon service is back after what used to take it away, through one real server.

    .venv/bin/python bench/recovery.py [--stall 15]

- Full tables: every Wyoming and HTTP connection the server allows held open and
  idle, then a `describe` and a `GET /health`: how long each takes to be answered
  (the oldest idle connection makes room).
- A hung worker: the worker stopped (SIGSTOP) while it speaks an answer; a second
  client's one sentence is timed from the stop until its audio-stop. The stall bound
  is lowered to `--stall` seconds through the tests' own switch (a real one is
  derived per call, tens of seconds): the figure to read is what comes on top of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import time

from client import Server, request
from support.http_client import http_base

from wyoming_kokoro.options import MAX_CONNECTIONS
from wyoming_kokoro.server.watchdog import TEST_ONLY_ENV

ANSWER = (
    "Tomorrow will be mostly sunny in the morning, with clouds gathering over the hills "
    "in the early afternoon and a light breeze coming in from the sea after lunch."
)
SENTENCE = "The washing machine has finished."


async def _describe_ms(host: str, port: int) -> float:
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe

    started = time.perf_counter()
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 10)
    assert event is not None and event.type == "info", event
    return 1000 * (time.perf_counter() - started)


async def _health_ms(port: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: bench\r\n\r\n")
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert b" 200 " in line, line
    return 1000 * (time.perf_counter() - started)


async def full_tables(server: Server) -> tuple[float, float]:
    limit = int(MAX_CONNECTIONS.default)
    http_port = int(http_base(server).rsplit(":", 1)[1])
    idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(limit)]
    idle += [await asyncio.open_connection("127.0.0.1", http_port) for _ in range(limit + 8)]
    await asyncio.sleep(0.5)
    try:
        return await _describe_ms("127.0.0.1", server.port), await _health_ms(http_port)
    finally:
        for _, writer in idle:
            writer.close()


async def hung_worker(server: Server) -> float:
    first = asyncio.ensure_future(request(server.uri, ANSWER, streaming=False))
    while server.worker() is None or "Call for job" not in "".join(server.log):
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # its answer is being spoken
    worker = server.worker()
    assert worker is not None
    os.kill(worker, signal.SIGSTOP)
    stopped = time.perf_counter()
    try:
        second = await request(server.uri, SENTENCE, streaming=False, timeout=300)
        back = time.perf_counter() - stopped
        await first
    finally:
        with contextlib.suppress(ProcessLookupError):  # the watchdog's kill came first
            os.kill(worker, signal.SIGKILL)
    assert second.errors == 0 and second.audio_seconds > 0.5, second.types
    return back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stall", type=float, default=15.0, help="the lowered stall bound (s)")
    args = parser.parse_args()
    with Server("--http", "tcp://127.0.0.1:0") as server:
        describe_ms, health_ms = asyncio.run(full_tables(server))
    print("| full tables of idle connections | describe | /health |")
    print("|---|---|---|")
    print(f"| answered after | {describe_ms:.1f} ms | {health_ms:.1f} ms |")
    env = {TEST_ONLY_ENV: str(args.stall)}
    with Server("--debug", "--idle-timeout", "60", env=env) as server:
        back = asyncio.run(hung_worker(server))
    print()
    print("| hung worker (SIGSTOP mid-answer) | stall bound | a second client's sentence done |")
    print("|---|---|---|")
    print(f"| after the stop | {args.stall:.0f} s | {back:.1f} s ({back - args.stall:+.1f} s) |")


if __name__ == "__main__":
    main()
