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
) -> Heard:
    """One Home Assistant request: `synthesize`, or the streaming sequence.

    Non-streaming reads until the first audio-stop, streaming until
    synthesize-stopped (what HA waits for). `started` is set at the first audio.
    """
    heard = Heard()
    begin = time.monotonic()
    voice = Voice(name=VOICE)
    until = "synthesize-stopped" if streaming else "audio-stop"
    async with AsyncClient.from_uri(uri) as client:
        if streaming:
            await client.write_event(SynthesizeStart(voice=voice).event())
            for i in range(0, len(text), 7):  # LLM deltas cut mid-word
                await client.write_event(SynthesizeChunk(text=text[i : i + 7]).event())
        await client.write_event(Synthesize(text=text, voice=voice).event())
        if streaming:
            await client.write_event(SynthesizeStop().event())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
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
