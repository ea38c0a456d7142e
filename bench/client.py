"""A real server subprocess and a real `wyoming` client that times what it hears."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# One way to start and stop a real server, shared with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.server_process import ServerProcess
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop
from wyoming.tts import SynthesizeVoice as Voice

VOICE = "jm_kumo"


class Server(ServerProcess):
    """The tests' server process, with the question the benchmarks ask of it."""

    start_timeout = 60.0  # a loaded machine may be slow to import

    def worker(self) -> int | None:
        found = self.workers()
        return found[0] if found else None


@dataclass
class Heard:
    """When things arrived, in seconds since the client started connecting."""

    first_chunk: float | None = None  # streaming: the first synthesize-chunk went out
    last_chunk: float | None = None
    stop_sent: float | None = None  # streaming: synthesize-stop went out
    first_audio: float | None = None
    audio_stop: float | None = None
    end: float | None = None
    audio_bytes: int = 0
    # What a player starting at the first chunk would go without: the waits between
    # chunks that came after the audio before them had played.
    silent: float = 0.0
    longest_gap: float = 0.0  # the longest of those waits
    types: list[str] = field(default_factory=list)
    pcm: bytearray = field(default_factory=bytearray)  # what was heard, for the judge

    @property
    def audio_seconds(self) -> float:
        return self.audio_bytes / 48000  # 24 kHz, 16-bit, mono

    @property
    def errors(self) -> int:
        return self.types.count("error")


async def request(
    uri: str,
    text: str,
    streaming: bool,
    timeout: float = 900,
    started: asyncio.Event | None = None,
    chunk_chars: int = 7,
    chunk_every: float = 0.0,
    voice_name: str = VOICE,
) -> Heard:
    """One Home Assistant request: `synthesize`, or the streaming sequence.

    Streaming sends `chunk_chars`-character chunks (LLM deltas cut mid-word), one
    every `chunk_every` seconds, then the compat `synthesize` and `synthesize-stop`.
    Non-streaming reads until the first audio-stop, streaming until
    synthesize-stopped (what HA waits for). `started` is set at the first audio.
    """
    heard = Heard()
    begin = time.monotonic()
    voice = Voice(name=voice_name)
    until = "synthesize-stopped" if streaming else "audio-stop"

    async def send(client: AsyncClient) -> None:
        if streaming:
            await client.write_event(SynthesizeStart(voice=voice).event())
            for n, i in enumerate(range(0, len(text), chunk_chars)):
                if heard.first_chunk is not None and chunk_every:
                    # Paced on the first chunk's clock, so write time does not add up.
                    due = heard.first_chunk + n * chunk_every
                    await asyncio.sleep(max(0.0, due - (time.monotonic() - begin)))
                heard.last_chunk = time.monotonic() - begin
                if heard.first_chunk is None:
                    heard.first_chunk = heard.last_chunk
                await client.write_event(SynthesizeChunk(text=text[i : i + chunk_chars]).event())
        await client.write_event(Synthesize(text=text, voice=voice).event())
        if streaming:
            heard.stop_sent = time.monotonic() - begin
            await client.write_event(SynthesizeStop().event())

    async with AsyncClient.from_uri(uri) as client:
        # Read while still sending: audio that comes between paced chunks is timed
        # when it arrives, not when the last chunk has gone.
        sender = asyncio.create_task(send(client))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        plays_until = 0.0
        try:
            while True:
                event = await asyncio.wait_for(client.read_event(), deadline - loop.time())
                now = time.monotonic() - begin
                if event is None:
                    break
                heard.types.append(event.type)
                if AudioChunk.is_type(event.type):
                    audio = AudioChunk.from_event(event).audio
                    size = len(audio)
                    heard.audio_bytes += size
                    heard.pcm += audio
                    if heard.first_audio is None:
                        heard.first_audio = plays_until = now
                        if started is not None:
                            started.set()
                    gap = max(0.0, now - plays_until)
                    heard.silent += gap
                    heard.longest_gap = max(heard.longest_gap, gap)
                    plays_until = max(plays_until, now) + size / 48000
                elif event.type == "audio-stop" and heard.audio_stop is None:
                    heard.audio_stop = now
                if event.type in (until, "error"):
                    break
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
    heard.end = time.monotonic() - begin
    return heard


async def describe(uri: str) -> float:
    """Seconds for connect + describe + info, on a new connection like HA."""
    begin = time.monotonic()
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while (event := await asyncio.wait_for(client.read_event(), 10)) is not None:
            if event.type == "info":
                return time.monotonic() - begin
    raise RuntimeError("no info")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def latencies(values: list[float]) -> dict[str, float]:
    """Count, p50, p99 and max in milliseconds of latencies given in seconds."""
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50": percentile(ms, 50), "p99": percentile(ms, 99), "max": max(ms)}
