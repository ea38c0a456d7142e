"""SIGTERM while answers are under way (a real server, its real worker, a real signal):
no new connections, the answers that can finish in the grace period do, the others
end in a way their clients can tell (an error event; a chunked body without its last
chunk), and the server exits 0 with a quiet log."""

from __future__ import annotations

import asyncio
import json
import signal
import time

import pytest
from support.http_client import http_base, http_server
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

pytestmark = pytest.mark.model

# One call: decoded whole (--decode whole), its audio is all in the server once the
# first of it arrives, so its end does not hang on how busy the machine is.
SHORT = "All done."
LONG = " ".join(
    f"Sentence number {i} of a long answer that takes a while to say." for i in range(40)
)


def _chunked(data: bytes) -> tuple[int, bytes, bool]:
    """The status, the body, and whether its chunked encoding came to its end."""
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    body = b""
    while True:
        size_line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            return status, body, False
        size = int(size_line, 16)
        if size == 0:
            return status, body, rest.startswith(b"\r\n")
        if len(rest) < size + 2:
            return status, body + rest[:size], False
        body, rest = body + rest[:size], rest[size + 2 :]


async def _http(port: int, text: str, started: asyncio.Event) -> bytes:
    body = json.dumps({"input": text, "voice": "jm_kumo", "response_format": "pcm"}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    data = await reader.readuntil(b"\r\n\r\n")  # the status comes with the first audio
    started.set()
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), 60):
            data += chunk
    except ConnectionError:
        pass  # a reset is an end the client can tell, too
    writer.close()
    return data


async def _wyoming(uri: str, text: str, started: asyncio.Event) -> list[str]:
    """The events' types (audio chunks once, when the first came), errors' texts."""
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text).event())
        seen: list[str] = []
        while True:
            event = await asyncio.wait_for(client.read_event(), 60)
            if event is None:
                return [*seen, "EOF"]
            if event.type == "audio-chunk":
                started.set()
                if seen[-1:] == ["audio-chunk"]:
                    continue
            seen.append(event.data.get("text", "") if event.type == "error" else event.type)
            if event.type in ("audio-stop", "error"):
                return seen


def test_sigterm_finishes_short_answers_and_ends_long_ones_clearly() -> None:
    with http_server("--preload", "--decode", "whole") as srv:
        assert srv.wait_for(lambda: len(srv.workers()) == 1, timeout=60)
        port = int(http_base(srv).rsplit(":", 1)[1])

        async def main() -> tuple[list[list[str]], list[bytes], float]:
            flags = [asyncio.Event() for _ in range(4)]
            long = [
                asyncio.ensure_future(_wyoming(srv.uri, LONG, flags[0])),
                asyncio.ensure_future(_http(port, LONG, flags[1])),
            ]
            await asyncio.wait_for(asyncio.gather(*(f.wait() for f in flags[:2])), 60)
            short = [
                asyncio.ensure_future(_wyoming(srv.uri, SHORT, flags[2])),
                asyncio.ensure_future(_http(port, SHORT, flags[3])),
            ]
            # Both short answers have begun: SIGTERM in the middle of all four.
            await asyncio.wait_for(asyncio.gather(*(f.wait() for f in flags[2:])), 60)
            srv.proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            wyoming = [await long[0], await short[0]]
            http = [await long[1], await short[1]]
            code = await asyncio.to_thread(srv.proc.wait, 30)
            assert code == 0
            return wyoming, http, time.monotonic() - sent

        wyoming, http, took = asyncio.run(main())
    log = "".join(srv.log)
    print(f"exited {took:.1f} s after SIGTERM")
    # Wyoming: the short answer whole; the long one ends with an error event.
    assert wyoming[1] == ["audio-start", "audio-chunk", "audio-stop"], wyoming[1]
    assert wyoming[0][:2] == ["audio-start", "audio-chunk"], wyoming[0]
    assert wyoming[0][2:] == ["the server is shutting down"], wyoming[0]
    # HTTP: the short body whole, the long one without its last chunk.
    status, body, complete = _chunked(http[1])
    assert status == 200 and complete and len(body) > 9_600, (status, complete, len(body))
    status, body, complete = _chunked(http[0])
    assert status == 200 and not complete and body, (status, complete, len(body))
    # Under Home Assistant's 10 s before SIGKILL, and nothing loud in the log.
    assert took < 10, took
    assert "Traceback" not in log and " ERROR " not in log, log
