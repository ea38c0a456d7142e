"""A real `wyoming` client driving the server the way Home Assistant does."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)


@dataclass
class Reply:
    """What came back: event types in order, the PCM, whether the server hung up."""

    types: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    audio: bytes = b""
    closed: bool = False

    @property
    def errors(self) -> list[str]:
        return [e.data.get("text", "") for e in self.events if e.type == "error"]


async def collect(client: AsyncClient, until: str, timeout: float) -> Reply:
    reply = Reply()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        event = await asyncio.wait_for(client.read_event(), deadline - loop.time())
        if event is None:
            reply.closed = True
            return reply
        reply.types.append(event.type)
        reply.events.append(event)
        if AudioChunk.is_type(event.type):
            reply.audio += AudioChunk.from_event(event).audio
        if event.type in (until, "error"):
            return reply


def _voice(name: str | None) -> SynthesizeVoice | None:
    return SynthesizeVoice(name=name) if name else None


async def synthesize(uri: str, text: str, voice: str | None = None, timeout: float = 120) -> Reply:
    """HA's non-streaming call: one synthesize, read until the first audio-stop."""
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text, voice=_voice(voice)).event())
        return await collect(client, "audio-stop", timeout)


async def stream(
    uri: str,
    text: str,
    voice: str | None = None,
    piece: int = 7,
    timeout: float = 120,
    every: float = 0.0,
) -> Reply:
    """HA's streaming call: start, mid-word chunks (`every` seconds apart, as an LLM
    writes them), the compat synthesize, stop."""
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(SynthesizeStart(voice=_voice(voice)).event())
        for i in range(0, len(text), piece):
            if i and every:
                await asyncio.sleep(every)
            await client.write_event(SynthesizeChunk(text=text[i : i + piece]).event())
        await client.write_event(Synthesize(text=text, voice=_voice(voice)).event())
        await client.write_event(SynthesizeStop().event())
        return await collect(client, "synthesize-stopped", timeout)


async def voice_names(uri: str, timeout: float = 10) -> list[str]:
    """The voices a describe lists, as Home Assistant reads them."""
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout)
            assert event is not None
            if Info.is_type(event.type):
                return [v.name for v in Info.from_event(event).tts[0].voices]


def run(coro):
    return asyncio.run(coro)
