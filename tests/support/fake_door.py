"""The real Wyoming door (handler, scheduler) on a loopback port, with the in-memory worker.

For protocol and scheduling tests that need real connections and the real `wyoming`
client but not the model: what comes back as "audio" is the text itself (see
fake_worker.py), so a test reads exactly what each client was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from support.fake_worker import FakeWorker
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.protocol import WorkerConfig
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.wire import Limits
from wyoming_kokoro.settings import EngineSettings, SpeechSettings

VOICES = ("jm_kumo", "af_heart")


@dataclass
class Door:
    uri: str
    worker: FakeWorker
    scheduler: Scheduler


@contextlib.asynccontextmanager
async def fake_door(
    windows: int = 1,
    idle_timeout: float = 60.0,
    connection_timeout: float = 30.0,
    pad: int = 0,
    presets: dict[str, Preset] | None = None,
) -> AsyncIterator[Door]:
    """A listening door whose worker is a FakeWorker; closed (and the worker stopped) after.

    `connection_timeout` is the server's --connection-timeout; `pad` the fake's bytes
    of audio per call (fake_worker.said); `presets` as if read from presets.yaml.
    """
    worker = FakeWorker(windows, pad)
    assets = Assets(Path("m.onnx"), Path("v.npz"), VOICES, "test")
    config = WorkerConfig(assets, EngineSettings(threads=1))
    scheduler = Scheduler(config, SchedulerOptions(idle_timeout, min_free_mb=0), worker)
    offer = Offer(VOICES, presets or {}, VOICES[0], streaming=True)
    speech = SpeechSettings()
    handler_config = HandlerConfig(
        info=offer.info,
        voice_names=VOICES,
        default_voice=VOICES[0],
        speed=1.0,
        max_text_chars=speech.max_text_chars,
        limits=Limits(max_data_bytes=speech.max_text_json_bytes),
        idle_seconds=connection_timeout,
        offer=offer,
    )
    ids = itertools.count(1)

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await KokoroHandler(reader, writer, handler_config, scheduler, next(ids)).run()

    scheduler.start()
    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield Door(f"tcp://127.0.0.1:{port}", worker, scheduler)
    finally:
        server.close()
        await scheduler.stop()
