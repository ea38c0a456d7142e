"""Scenarios B5-B9: the real server over 127.0.0.1, driven like Home Assistant drives it."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

import texts
from client import Heard, Server, describe, latencies, request
from procs import mark

from wyoming_kokoro.server.memory import rss_mb

Result = dict[str, Any]
KEEP = ("--idle-timeout", "600")  # the worker stays loaded for the whole scenario


def server_describe(quick: bool) -> Result:
    """B5: describe latency on a new connection each, idle and during a synthesis."""
    count = 200

    async def busy(uri: str) -> tuple[list[float], bool]:
        started = asyncio.Event()
        article = asyncio.create_task(request(uri, texts.ANSWER_1500, False, started=started))
        await asyncio.wait_for(started.wait(), 120)  # the worker is loaded and speaking
        values = [await describe(uri) for _ in range(count)]
        still_speaking = not article.done()
        article.cancel()
        return values, still_speaking

    async def idle(uri: str) -> list[float]:
        return [await describe(uri) for _ in range(count)]

    with Server(*KEEP) as server:
        first = asyncio.run(describe(server.uri))
        idle_values = asyncio.run(idle(server.uri))
        busy_values, still_speaking = asyncio.run(busy(server.uri))
    return {
        "first_ms": first * 1000,
        "idle": latencies(idle_values),
        "busy": latencies(busy_values),
        "busy_whole_time": still_speaking,
    }


def summary(runs: list[Heard]) -> Result:
    """Medians of first audio and end over repeated requests for one text."""
    return {
        "first_audio": statistics.median(h.first_audio or float("nan") for h in runs),
        "end": statistics.median(h.end or float("nan") for h in runs),
        "audio_s": runs[0].audio_seconds,
        "errors": sum(h.errors for h in runs),
        "reps": len(runs),
    }


def server_ttfa(quick: bool) -> Result:
    """B6: time to first audio-chunk, cold (fresh server) and warm, both HA call styles."""
    cases = [
        (label, text, streaming)
        for label, text in (("short", texts.SHORT), ("long", texts.ANSWER_1500))
        for streaming in (False, True)
    ]
    result: Result = {}
    for label, text, streaming in cases:
        key = f"{label}_{'stream' if streaming else 'synth'}"
        with Server(*KEEP) as server:
            result[f"cold_{key}"] = summary([asyncio.run(request(server.uri, text, streaming))])
    with Server(*KEEP) as server:
        asyncio.run(request(server.uri, texts.SHORT, False))  # load the worker
        for label, text, streaming in cases:
            key = f"{label}_{'stream' if streaming else 'synth'}"
            reps = 1 if quick else (3 if label == "short" else 2)
            runs = [asyncio.run(request(server.uri, text, streaming)) for _ in range(reps)]
            result[f"warm_{key}"] = summary(runs)
    return result


def server_memory(quick: bool) -> Result:
    """B7: server RSS before first use, with the worker loaded, after idle unload."""
    with Server("--idle-timeout", "3") as server:
        time.sleep(1.0)
        start = rss_mb(server.pid)
        mark("idle")
        heard = asyncio.run(request(server.uri, texts.ENGLISH_600, True))
        worker = server.worker()
        loaded = {"server": rss_mb(server.pid), "worker": rss_mb(worker) if worker else None}
        mark("loaded")
        began = time.monotonic()
        gone = server.wait_for(lambda: server.worker() is None, 60)
        unload_s = time.monotonic() - began
        time.sleep(0.5)
        after = rss_mb(server.pid)
        mark("unloaded")
    return {
        "start": start,
        "loaded": loaded,
        "after": after,
        "unloaded": gone,
        "unload_s": unload_s,
        "errors": heard.errors,
    }


def worker_growth(quick: bool) -> Result:
    """B8: worker RSS over many short sequential requests (streaming and not, in turn)."""
    count = 50 if quick else 200
    points: dict[int, Result] = {}

    async def run(server: Server) -> int:
        errors = 0
        for i in range(1, count + 1):
            text = texts.SENTENCES[i % len(texts.SENTENCES)]
            heard = await request(server.uri, text, streaming=i % 2 == 0, timeout=120)
            errors += heard.errors + (heard.first_audio is None)
            if i in (1, 10, 50, 100, count):
                worker = server.worker()
                points[i] = {
                    "worker_pid": worker,
                    "worker": rss_mb(worker) if worker else None,
                    "server": rss_mb(server.pid),
                }
        return errors

    with Server(*KEEP) as server:
        errors = asyncio.run(run(server))
    return {"count": count, "points": points, "errors": errors}


def concurrent(quick: bool) -> Result:
    """B9: an announcement 0.5 s after a long article starts, from another client."""
    article = texts.long_text(3000)

    async def pair(uri: str, streaming: bool) -> tuple[Heard, bool]:
        long_one = asyncio.create_task(request(uri, article, streaming))
        await asyncio.sleep(0.5)
        announcement = await request(uri, texts.ANNOUNCEMENT, streaming)
        still_speaking = not long_one.done()
        long_one.cancel()
        return announcement, still_speaking

    result: Result = {"article_chars": len(article)}
    for streaming in (True, False):
        with Server(*KEEP) as server:
            asyncio.run(request(server.uri, texts.SHORT, False))  # load the worker
            alone = asyncio.run(request(server.uri, texts.ANNOUNCEMENT, streaming))
            heard, still_speaking = asyncio.run(pair(server.uri, streaming))
        result["stream" if streaming else "synth"] = {
            "alone_end": alone.end,
            "alone_first_audio": alone.first_audio,
            "first_audio": heard.first_audio,
            "end": heard.end,
            "audio_s": heard.audio_seconds,
            "alone_audio_s": alone.audio_seconds,
            "errors": heard.errors,
            "article_still_speaking": still_speaking,
        }
    # Cold: the article's request starts the worker; each case on a fresh server.
    with Server(*KEEP) as server:
        alone = asyncio.run(request(server.uri, texts.ANNOUNCEMENT, True))
    with Server(*KEEP) as server:
        heard, _ = asyncio.run(pair(server.uri, True))
    result["cold_stream"] = {
        "alone_first_audio": alone.first_audio,
        "first_audio": heard.first_audio,
    }
    return result


SCENARIOS: dict[str, Callable[[bool], Result]] = {
    "server_describe": server_describe,
    "server_ttfa": server_ttfa,
    "server_memory": server_memory,
    "worker_growth": worker_growth,
    "concurrent": concurrent,
}
