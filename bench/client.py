"""A real server subprocess and a real `wyoming` client that times what it hears."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from procs import children
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop
from wyoming.tts import SynthesizeVoice as Voice

VOICE = "jm_kumo"
_READY = re.compile(r"Ready on tcp://127\.0\.0\.1:(\d+)")


class Server:
    """`python -m wyoming_kokoro` on 127.0.0.1 with a free port; stops on exit."""

    def __init__(self, *args: str) -> None:
        self.args = [sys.executable, "-m", "wyoming_kokoro", "--uri", "tcp://127.0.0.1:0", *args]
        self.log: list[str] = []
        self.port = 0
        self._ready = threading.Event()
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(
            self.args, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        threading.Thread(target=self._pump, daemon=True).start()
        if not self._ready.wait(60):
            self.stop()
            raise RuntimeError("server did not start:\n" + "".join(self.log[-20:]))
        return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if match := _READY.search(line):
                self.port = int(match.group(1))
                self._ready.set()

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def worker(self) -> int | None:
        found = children(self.pid)
        return found[0] if found else None

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        self.stop()


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
    types: list[str] = field(default_factory=list)

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
) -> Heard:
    """One Home Assistant request: `synthesize`, or the streaming sequence.

    Streaming sends `chunk_chars`-character chunks (LLM deltas cut mid-word), one
    every `chunk_every` seconds, then the compat `synthesize` and `synthesize-stop`.
    Non-streaming reads until the first audio-stop, streaming until
    synthesize-stopped (what HA waits for). `started` is set at the first audio.
    """
    heard = Heard()
    begin = time.monotonic()
    voice = Voice(name=VOICE)
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
        try:
            while True:
                event = await asyncio.wait_for(client.read_event(), deadline - loop.time())
                now = time.monotonic() - begin
                if event is None:
                    break
                heard.types.append(event.type)
                if AudioChunk.is_type(event.type):
                    heard.audio_bytes += len(AudioChunk.from_event(event).audio)
                    if heard.first_audio is None:
                        heard.first_audio = now
                        if started is not None:
                            started.set()
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
