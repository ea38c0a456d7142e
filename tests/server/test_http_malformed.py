"""Requests that are not HTTP at all, sent by hand to a real server: each is one
log line and a short JSON 400 that echoes none of it, never aiohttp's traceback
and text/plain echo; the server answers /health after. (Port scanners send these.)"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.http_client import http_base, http_server
from support.server_process import ServerProcess

PROBE = b"Xq7-probe"  # in every malformed request: the answer must not echo it

MALFORMED = {
    "a header over 8190 bytes": b"GET / HTTP/1.1\r\nHost: a\r\nX-A: " + PROBE * 1000 + b"\r\n\r\n",
    "a URL over 8 KB": b"GET /" + PROBE * 1000 + b" HTTP/1.1\r\nHost: a\r\n\r\n",
    "300 headers": b"GET / HTTP/1.1\r\nHost: a\r\n"
    + b"".join(b"X-%d: %s\r\n" % (i, PROBE) for i in range(300))
    + b"\r\n",
    "HTTP/9.9": b"GET /" + PROBE + b" HTTP/9.9\r\nHost: a\r\n\r\n",
    "Content-Length -1": b"POST /" + PROBE + b" HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
    "a huge Content-Length": b"POST /"
    + PROBE
    + b" HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "a bad chunk size": b"POST /v1/audio/speech HTTP/1.1\r\nHost: a\r\n"
    b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz" + PROBE + b"\r\n",
    "Content-Length and Transfer-Encoding": b"POST /" + PROBE + b" HTTP/1.1\r\nHost: a\r\n"
    b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "a NUL in a header": b"GET / HTTP/1.1\r\nHost: a\r\nX-A: " + PROBE + b"\x00b\r\n\r\n",
    "not HTTP": PROBE + b"\x16\x03\x01\x02\x00\r\n\r\n",
}


@pytest.fixture(scope="module")
def door() -> Iterator[ServerProcess]:
    with http_server("--debug", "--connection-timeout", "1") as running:
        yield running


def send_raw(server: ServerProcess, data: bytes, wait: float = 5.0) -> bytes:
    """What the server answers `data` with, until it closes."""
    port = int(http_base(server).rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        # No half-close: aiohttp answers nothing to a request whose sender has
        # ended its input. Junk that is no whole request is met by the timeout.
        with contextlib.suppress(OSError):  # refused before all was sent: read the answer
            sock.sendall(data)
        reply = b""
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            while chunk := sock.recv(65536):
                reply += chunk
    return reply


def healthy(server: ServerProcess) -> bool:
    reply = send_raw(server, b"GET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    return reply.startswith(b"HTTP/1.1 200")


def settled(server: ServerProcess) -> int:
    """Where the next request's log lines begin (see test_http_errors.settled)."""
    marker = f"settle-{time.monotonic_ns()}"
    send_raw(
        server, f"GET /static/{marker} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
    )
    assert server.wait_for(lambda: any(marker in line for line in server.log), 5)
    return next(i for i, line in enumerate(server.log) if marker in line) + 1


def check_quiet(server: ServerProcess, start: int) -> None:
    assert healthy(server)
    settled(server)  # what the malformed request logged has arrived
    added = "".join(server.log[start:])
    assert "Traceback" not in added and "ERROR" not in added, added


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_request_is_one_line_and_a_json_400(door, data) -> None:
    start = settled(door)
    reply = send_raw(door, data)
    head, _, body = reply.partition(b"\r\n\r\n")
    if reply:  # a reset before the answer is read is no answer to check
        assert head.split(b" ", 2)[1] == b"400", reply[:300]
        assert b"application/json" in head, reply[:300]
        error = json.loads(body)["error"]
        assert error["type"] == "invalid_request_error" and error["code"] == "bad_request"
        assert PROBE not in reply and b"Xq7" not in reply, reply[:300]
    check_quiet(door, start)
    lines = [line for line in door.log[start:] if "malformed" in line]
    assert len(lines) == 1, "".join(door.log[start:])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    line=st.sampled_from([b"GET / HTTP/1.1", b"POST /v1/audio/speech HTTP/1.1", b""]),
    junk=st.binary(min_size=1, max_size=300),
)
def test_any_bytes_never_make_a_traceback(door, line, junk) -> None:
    start = settled(door)
    send_raw(door, line + b"\r\n" + junk + b"\r\n\r\n", wait=0.5)
    check_quiet(door, start)
