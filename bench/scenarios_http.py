"""Scenarios H1-H2: the OpenAI-compatible HTTP side (--http) against Wyoming.

H1: time to the first body byte of `POST /v1/audio/speech` vs the first audio
chunk over Wyoming, same server, same text, same warm worker, alternating.
H2: idle server RSS without and with --http, and after compressed formats.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import statistics
import time
from typing import Any

import texts
from client import VOICE, Server, request
from procs import mark

from wyoming_kokoro.server.memory import rss_mb

Result = dict[str, Any]
HTTP = ("--http", "tcp://127.0.0.1:0")
HTTP_READY = re.compile(r"HTTP API on http://127\.0\.0\.1:(\d+)/v1")


def _port(server: Server) -> int:
    for line in server.log:
        if match := HTTP_READY.search(line):
            return int(match.group(1))
    raise RuntimeError("no HTTP API line in the server log")


def http_request(port: int, text: str, fmt: str, whole: bool = True) -> tuple[float, float, int]:
    """(first body byte, end, bytes) in seconds since connecting.

    whole=False hangs up after the first bytes: the server drops the rest of the queue.
    """
    begin = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    body = {"model": "tts-1", "input": text, "voice": VOICE, "response_format": fmt}
    conn.request("POST", "/v1/audio/speech", json.dumps(body), {"Content-Type": "application/json"})
    reply = conn.getresponse()
    first = reply.read1(65536)
    first_at = time.monotonic() - begin
    size = len(first) + (len(reply.read()) if whole else 0)
    conn.close()
    return first_at, time.monotonic() - begin, size


def http_first_byte(quick: bool) -> Result:
    """H1: first byte over HTTP (pcm, mp3) vs first audio over Wyoming, warm worker."""
    reps = 2 if quick else 4
    result: Result = {}
    with Server(*HTTP, "--idle-timeout", "600") as server:
        port = _port(server)
        asyncio.run(request(server.uri, texts.SHORT, False))  # load and warm the worker
        for label, text in (("short", texts.SHORT), ("long", texts.ANSWER_1500)):
            wyoming, pcm, mp3 = [], [], []
            for _ in range(reps):  # alternating: a drift in machine load hits all three
                heard = asyncio.run(request(server.uri, text, False))
                wyoming.append(heard.first_audio or float("nan"))
                pcm.append(http_request(port, text, "pcm", whole=False)[0])
                mp3.append(http_request(port, text, "mp3", whole=False)[0])
            base = statistics.median(wyoming)
            result[label] = {
                "wyoming_first_audio": base,
                "http_pcm_first_byte": statistics.median(pcm),
                "http_mp3_first_byte": statistics.median(mp3),
                "pcm_ratio": statistics.median(pcm) / base,
                "mp3_ratio": statistics.median(mp3) / base,
                "reps": reps,
            }
    return result


def _idle_rss(server: Server) -> float:
    time.sleep(1.5)  # start-up allocations settle
    return rss_mb(server.pid) or float("nan")


def http_memory(quick: bool) -> Result:
    """H2: idle RSS of the server process without and with --http (no worker running)."""
    with Server("--idle-timeout", "2") as plain:
        without = _idle_rss(plain)
        mark("without_http")
    with Server(*HTTP, "--idle-timeout", "2") as server:
        with_http = _idle_rss(server)
        mark("with_http")
        port = _port(server)
        http_request(port, texts.SHORT, "wav")
        for fmt in ("mp3", "opus", "aac", "flac"):  # PyAV is loaded for these
            http_request(port, texts.SHORT, fmt)
        server.wait_for(lambda: server.worker() is None, 60)
        after = _idle_rss(server)
        mark("after_formats")
    return {
        "without_http": without,
        "with_http": with_http,
        "http_adds": with_http - without,
        "after_all_formats": after,
    }


SCENARIOS = {"http_first_byte": http_first_byte, "http_memory": http_memory}
