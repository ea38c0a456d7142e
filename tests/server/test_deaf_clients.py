"""A Wyoming client that stops reading and then hangs up, against a real server:
one line in the log, never a traceback ("Task exception was never retrieved" from
the sender's failed write came with one), and the server speaks on after."""

from __future__ import annotations

import gc
import json
import socket
import time

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

pytestmark = pytest.mark.model

TXT = "The kitchen light is on. The front door is locked. It is twenty degrees. "


def event(kind: str, data: dict) -> bytes:
    return (json.dumps({"type": kind, "data": data}) + "\n").encode()


ONE = [event("synthesize", {"text": TXT * 6})]
STREAMED = [
    event("synthesize-start", {}),
    *(event("synthesize-chunk", {"text": TXT}) for _ in range(6)),
    event("synthesize-stop", {}),
]


def deaf_client(port: int, events: list[bytes], sleep: float) -> None:
    """Ask, read nothing (a small receive buffer fills at once), then close."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"".join(events))
    time.sleep(sleep)
    sock.close()


@pytest.mark.parametrize("events", [ONE, STREAMED], ids=["synthesize", "streamed"])
def test_a_client_that_stops_reading_then_leaves_is_no_traceback(events) -> None:
    with ServerProcess("--debug", "--connection-timeout", "60") as server:
        for _ in range(2):
            deaf_client(server.port, events, sleep=10)
        reply = run(synthesize(server.uri, "Still here."))  # the server speaks on
        assert reply.audio and not reply.errors
        gc.collect()  # ours; the server's own collector runs as it allocates
        time.sleep(2)  # a task's unretrieved failure is logged when it is collected
        log = "".join(server.log)
    assert "Traceback" not in log and " ERROR " not in log, log
    assert "never retrieved" not in log, log
