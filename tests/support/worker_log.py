"""What the worker's debug log says was spoken, per client."""

from __future__ import annotations

import re

QUEUED = re.compile(r"Queued job (\d+) of client (\d+)")
CALL = re.compile(r"Call for job (\d+) of client (\d+)")


def calls_by_client(log: list[str]) -> list[tuple[str, int]]:
    """("queued" | "call", client) in log order."""
    events = []
    for line in log:
        if match := QUEUED.search(line):
            events.append(("queued", int(match.group(2))))
        elif match := CALL.search(line):
            events.append(("call", int(match.group(2))))
    return events
