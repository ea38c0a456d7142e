"""Scenarios B10-B12: the real server under Home Assistant's everyday load.

Each one first drives the server, stops it, then loads the model in this process
and calls kokoro-onnx directly on the same texts (same model file and threads,
see scenarios_core), so server and baseline never compete for the two cores.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import texts
from client import Heard, Server, describe, latencies, request
from procs import mark
from scenarios_core import baseline, first_kokoro, load_engine
from scenarios_server import KEEP, summary

Result = dict[str, Any]
WARM_TEXT = texts.SENTENCES[0]  # loads the worker; not one of the measured texts
LLM_CHUNK_CHARS = 30
LLM_CHUNK_EVERY = 0.05  # seconds between two LLM deltas
DESCRIBE_EVERY = 0.1  # the 5th client of B11: often enough for a p99, cheap on 2 cores


async def announce(uri: str, text: str) -> Heard:
    """What HA sends for a whole message when streaming is advertised: one chunk."""
    return await request(uri, text, True, chunk_chars=len(text))


def _direct(items: Sequence[str], reps: int) -> list[Result]:
    """kokoro-onnx `create()` on each text, warmed like the server was: wall and audio."""
    engine = load_engine()
    baseline(engine, WARM_TEXT)
    out = []
    for text in items:
        runs = [baseline(engine, text) for _ in range(reps)]
        out.append({"wall": statistics.median(w for w, _ in runs), "audio_s": runs[0][1]})
    return out


def _with_direct(runs: list[Heard], direct: Result, text: str) -> Result:
    """One text's medians over the runs, next to kokoro-onnx on the same text."""
    return {
        **summary(runs),
        "text": text,
        "chars": len(text),
        "kokoro_wall": direct["wall"],
        "kokoro_audio_s": direct["audio_s"],
    }


def sequence4(quick: bool) -> Result:
    """B10: four short announcements one after another on a warm server."""
    rounds = 1 if quick else 3
    items = texts.ANNOUNCEMENTS
    runs: list[list[Heard]] = [[] for _ in items]
    with Server(*KEEP) as server:
        asyncio.run(announce(server.uri, WARM_TEXT))
        mark("sequence")
        for _ in range(rounds):
            for i, text in enumerate(items):
                runs[i].append(asyncio.run(announce(server.uri, text)))
    mark("baseline")
    direct = _direct(items, rounds)
    return {
        "rounds": rounds,
        "requests": [_with_direct(r, d, t) for r, d, t in zip(runs, direct, items, strict=True)],
    }


async def _burst(uri: str, items: Sequence[str]) -> tuple[list[Heard], list[float]]:
    """All texts at once, one client each; a 5th client describes until all are done."""
    tasks = [asyncio.create_task(announce(uri, text)) for text in items]
    probes: list[float] = []
    while not all(task.done() for task in tasks):
        probes.append(await describe(uri))  # a new connection each time, like HA
        await asyncio.sleep(DESCRIBE_EVERY)
    return list(await asyncio.gather(*tasks)), probes


def clients4(quick: bool) -> Result:
    """B11: four clients at once, each a different short or medium text."""
    rounds = 1 if quick else 3
    items = texts.CLIENT_TEXTS
    runs: list[list[Heard]] = [[] for _ in items]
    probes: list[float] = []
    makespans: list[float] = []
    with Server(*KEEP) as server:
        asyncio.run(announce(server.uri, WARM_TEXT))
        mark("load")
        for _ in range(rounds):
            heard, described = asyncio.run(_burst(server.uri, items))
            for i, h in enumerate(heard):
                runs[i].append(h)
            probes += described
            makespans.append(max(h.end or 0.0 for h in heard))
    mark("baseline")
    direct = _direct(items, rounds)
    return {
        "rounds": rounds,
        "clients": [_with_direct(r, d, t) for r, d, t in zip(runs, direct, items, strict=True)],
        "makespan": statistics.median(makespans),
        "kokoro_serial": sum(d["wall"] for d in direct),
        "describe": latencies(probes),
    }


def _llm_run(uri: str) -> Result:
    """Streaming as an LLM writes, then `synthesize` sent when the LLM would be done.

    Times count from the first chunk (the LLM's first delta reaching the server).
    The non-streaming request runs afterwards on its own; its times are shifted by
    how long the LLM took, which is when HA would have sent it.
    """
    text = texts.LLM_ANSWER
    stream = asyncio.run(
        request(uri, text, True, chunk_chars=LLM_CHUNK_CHARS, chunk_every=LLM_CHUNK_EVERY)
    )
    assert stream.first_chunk is not None and stream.last_chunk is not None
    assert stream.stop_sent is not None and stream.end is not None
    llm = stream.last_chunk - stream.first_chunk
    whole = asyncio.run(request(uri, text, False))
    return {
        "llm_s": llm,
        "stream_first_audio": (stream.first_audio or float("nan")) - stream.first_chunk,
        "stream_stop_to_stopped": stream.end - stream.stop_sent,
        "stream_end": stream.end - stream.first_chunk,
        "stream_audio_s": stream.audio_seconds,
        "synth_first_audio": llm + (whole.first_audio or float("nan")),
        "synth_end": llm + (whole.end or float("nan")),
        "synth_audio_s": whole.audio_seconds,
        "errors": stream.errors + whole.errors,
    }


def llm_stream(quick: bool) -> Result:
    """B12: an LLM answer streamed in ~30-char chunks vs `synthesize` when it is done."""
    reps = 1 if quick else 3
    text = texts.LLM_ANSWER
    with Server(*KEEP) as server:
        asyncio.run(announce(server.uri, WARM_TEXT))
        mark("streaming")
        runs = [_llm_run(server.uri) for _ in range(reps)]
    mark("baseline")
    engine = load_engine()
    baseline(engine, WARM_TEXT)
    first = [first_kokoro(engine, text) for _ in range(reps)]
    whole = [baseline(engine, text) for _ in range(reps)]
    result: Result = {
        key: statistics.median(run[key] for run in runs) for key in runs[0] if key != "errors"
    }
    llm = result["llm_s"]
    return {
        **result,
        "chars": len(text),
        "chunks": -(-len(text) // LLM_CHUNK_CHARS),
        "reps": reps,
        "errors": sum(run["errors"] for run in runs),
        "kokoro_stream_first_audio": llm + statistics.median(f for f, _ in first),
        "kokoro_stream_first_s": first[0][1],
        "kokoro_end": llm + statistics.median(w for w, _ in whole),
        "kokoro_audio_s": whole[0][1],
    }


SCENARIOS: dict[str, Callable[[bool], Result]] = {
    "sequence4": sequence4,
    "clients4": clients4,
    "llm_stream": llm_stream,
}
