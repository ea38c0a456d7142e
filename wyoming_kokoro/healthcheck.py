"""Container health check: one real Describe → Info round trip over Wyoming.

    python3 -m wyoming_kokoro.healthcheck [--uri tcp://127.0.0.1:10200] [--timeout 5]

Exits 0 and prints the TTS program's name when the server answers with an installed
TTS program; otherwise exits 1 with a one-line reason. A bare port check would pass
while the event loop is stuck; Home Assistant itself only ever sends a describe.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from wyoming.client import AsyncClient
from wyoming.info import Describe, Info

DEFAULT_URI = "tcp://127.0.0.1:10200"
DEFAULT_TIMEOUT = 5.0


class HealthCheckError(Exception):
    """The server answered, but not with what Home Assistant needs."""


async def describe(uri: str) -> str:
    """Send Describe, wait for Info; return the name of the first installed TTS program."""
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                raise HealthCheckError("connection closed before info")
            if not Info.is_type(event.type):
                continue  # e.g. a stray event from a server that talks first
            info = Info.from_event(event)
            # Home Assistant uses only the first installed TTS program.
            for program in info.tts:
                if program.installed:
                    voices = sum(1 for voice in program.voices if voice.installed)
                    return f"{program.name} ({voices} voices)"
            raise HealthCheckError("info has no installed TTS program")


def check(uri: str, timeout: float) -> str:
    """Run :func:`describe` under one overall deadline (connect included)."""
    return asyncio.run(asyncio.wait_for(describe(uri), timeout=timeout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m wyoming_kokoro.healthcheck",
        description="Check that a Wyoming TTS server answers describe with a TTS program.",
    )
    parser.add_argument("--uri", default=DEFAULT_URI, help=f"server URI (default {DEFAULT_URI})")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds for connect + describe + info (default {DEFAULT_TIMEOUT:g})",
    )
    args = parser.parse_args(argv)

    try:
        name = check(args.uri, args.timeout)
    except (TimeoutError, asyncio.TimeoutError):
        print(f"unhealthy: no info from {args.uri} within {args.timeout:g} s", file=sys.stderr)
        return 1
    except Exception as err:  # any failure is "unhealthy", reported on one line
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"unhealthy: {args.uri}: {reason}", file=sys.stderr)
        return 1

    print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
