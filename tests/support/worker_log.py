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


def newcomer_turn(events: list[tuple[str, int]]) -> tuple[list[int], list[int]]:
    """For the client that came second: the calls of others between its arrival and its
    first call, and the clients whose calls came after that first call."""
    first_client = events[0][1]
    newcomer = next(c for kind, c in events if kind == "queued" and c != first_client)
    queued_at = events.index(("queued", newcomer))
    first_call = events.index(("call", newcomer))
    between = [c for kind, c in events[queued_at:first_call] if kind == "call"]
    after = [c for kind, c in events[first_call:] if kind == "call"]
    return between, after
