"""The real server on 127.0.0.1 with its real worker, driven like Home Assistant does."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, stream, synthesize
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info
from wyoming.ping import Ping

from wyoming_kokoro.server.memory import rss_mb

SENTENCE = "The front door is locked."
ANNOUNCEMENT = "Turn on the kitchen lights. The garage door has been open for ten minutes."


async def describe(uri: str) -> Info:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 5)
        assert event is not None
        return Info.from_event(event)


def test_describe_cold_lists_english_voices_and_starts_no_worker(server: ServerProcess) -> None:
    info = run(describe(server.uri))
    program = info.tts[0]
    assert program.installed and program.supports_synthesize_streaming
    names = {v.name for v in program.voices}
    assert "jm_kumo" in names
    for voice in program.voices:
        assert voice.installed
        # Home Assistant needs real locales; the embedded voices speak English.
        assert "en_US" in voice.languages, voice
        assert voice.description and voice.version
    assert server.workers() == []  # describing never loads the model


def test_non_streaming_sequence_speaks_the_text(server: ServerProcess, listener) -> None:
    reply = run(synthesize(server.uri, SENTENCE))
    assert reply.types[0] == "audio-start"
    assert reply.types[-1] == "audio-stop"
    assert reply.types.count("audio-start") == 1
    assert set(reply.types[1:-1]) == {"audio-chunk"}
    start = reply.events[0].data
    assert (start["rate"], start["width"], start["channels"]) == (24000, 2, 1)
    listener.check_later(SENTENCE, reply.audio)
    assert len(server.workers()) == 1  # the burst's worker is running now
    # The model, and numpy, live in the worker only: the server stays light.
    with open(f"/proc/{server.pid}/maps") as maps:
        libraries = maps.read()
    assert "onnxruntime" not in libraries and "_multiarray_umath" not in libraries
    with open(f"/proc/{server.workers()[0]}/maps") as maps:
        assert "onnxruntime" in maps.read()  # the check above can see a loaded model


@pytest.mark.slow
def test_streaming_sequence_speaks_once_and_ends_with_stopped(
    server: ServerProcess, listener
) -> None:
    whole = run(synthesize(server.uri, ANNOUNCEMENT))
    streamed = run(stream(server.uri, ANNOUNCEMENT, piece=5))
    assert streamed.types[0] == "audio-start"
    assert streamed.types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert streamed.types.count("audio-start") == 1
    assert streamed.types.count("audio-stop") == 1
    # The compat `synthesize` inside the stream must not be spoken a second time.
    assert abs(len(streamed.audio) - len(whole.audio)) < 0.15 * len(whole.audio)
    listener.check_later(ANNOUNCEMENT, streamed.audio)


def test_streaming_sequence_with_markdown_reads_no_markup(server: ServerProcess, listener) -> None:
    text = "**Done!** The *living room* window is open.\n\n- Please close it."
    reply = run(stream(server.uri, text, piece=4))
    said = "Done! The living room window is open. Please close it."
    listener.check_later(said, reply.audio, unheard="star|asterisk")


def test_empty_text_gives_empty_audio(server: ServerProcess) -> None:
    reply = run(synthesize(server.uri, "   "))
    assert reply.types == ["audio-start", "audio-stop"]
    streamed = run(stream(server.uri, ""))
    assert streamed.types == ["audio-start", "audio-stop", "synthesize-stopped"]


def test_unknown_voice_falls_back_to_the_default(server: ServerProcess, listener) -> None:
    reply = run(synthesize(server.uri, SENTENCE, voice="no_such_voice"))
    assert reply.errors == []
    listener.check_later(SENTENCE, reply.audio)
    assert any("unknown voice 'no_such_voice'" in line for line in server.log)


def test_blend_voice_is_accepted(server: ServerProcess, listener) -> None:
    reply = run(synthesize(server.uri, SENTENCE, voice="jm_kumo(3)+jf_alpha(1)"))
    assert reply.errors == [] and reply.audio
    listener.check_later(SENTENCE, reply.audio, voice="jm_kumo(3)+jf_alpha(1)")


async def _ping_then_unknown_then_describe(uri: str) -> list[str]:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Ping(text="hi").event())
        pong = await asyncio.wait_for(client.read_event(), 5)
        from wyoming.event import Event

        await client.write_event(Event("select-program", {"name": "x"}))
        await client.write_event(Describe().event())
        info = await asyncio.wait_for(client.read_event(), 5)
        return [pong.type, pong.data.get("text"), info.type]


def test_ping_and_unknown_events(server: ServerProcess) -> None:
    assert run(_ping_then_unknown_then_describe(server.uri)) == ["pong", "hi", "info"]


async def _raw(port: int, data: bytes, then_describe: bool = False) -> list[dict]:
    """Send raw bytes, return the events that come back until the server hangs up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    writer.write_eof()  # a lying length must not leave the server waiting forever
    out = []
    try:
        while line := await asyncio.wait_for(reader.readline(), 10):
            header = json.loads(line)
            if header.get("data_length"):
                header["data"] = json.loads(await reader.readexactly(header["data_length"]))
            if header.get("payload_length"):
                await reader.readexactly(header["payload_length"])
            out.append(header)
    finally:
        writer.close()
    return out


@pytest.mark.parametrize(
    "data",
    [
        b"this is not json\n",
        b'{"type": "synthesize", "data_length": 99999999999}\n',
        b'{"type": "synthesize", "data_length": -3}\n',
        b'{"type": "synthesize", "data_length": 40}\n{"text": "short"}',
        b'{"type": "synthesize-chunk", "data": {"text": "chunk before start"}}\n',
        b'{"type": "synthesize-stop"}\n',
        b'{"type": "synthesize", "data": {"text": 5}}\n',
        b'{"type": 7}\n',
        b"\xff\xfe\x00garbage\n",
    ],
)
def test_malformed_input_gets_an_error_and_a_close(server: ServerProcess, data: bytes) -> None:
    events = run(_raw(server.port, data))
    assert [e["type"] for e in events] == ["error"], events
    assert events[0]["data"]["text"]
    # ... and everybody else is still served.
    assert run(describe(server.uri)).tts


def test_header_line_of_ten_megabytes_is_refused(server: ServerProcess) -> None:
    # The server hangs up while the client is still sending: the client may see
    # the error event or only a reset; either way the server must not buffer it all.
    try:
        events = run(_raw(server.port, b'{"type": "' + b"x" * 10_000_000 + b'"}\n'))
        assert [e["type"] for e in events] in (["error"], [])
    except ConnectionError:
        pass
    assert run(describe(server.uri)).tts
    assert rss_mb(server.pid) < 150


def test_client_vanishing_mid_stream_leaves_the_server_serving(server: ServerProcess) -> None:
    async def vanish() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        long = "This sentence is spoken to nobody at all. " * 20
        header = {"type": "synthesize", "data_length": 0}
        data = json.dumps({"text": long}).encode()
        header["data_length"] = len(data)
        writer.write(json.dumps(header).encode() + b"\n" + data)
        await writer.drain()
        await reader.readline()  # audio has started
        writer.transport.abort()

    run(vanish())
    reply = run(synthesize(server.uri, "Still here."))
    assert reply.types[-1] == "audio-stop" and reply.errors == []


def test_text_over_the_limit_is_refused() -> None:
    with ServerProcess("--max-text-chars", "50") as srv:
        reply = run(synthesize(srv.uri, "word " * 40))
        assert reply.errors and "limit of 50" in reply.errors[0]
        assert srv.workers() == []


def test_idle_worker_exits_and_next_request_starts_a_new_one(listener) -> None:
    with ServerProcess("--idle-timeout", "1") as srv:
        assert srv.workers() == []
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == [] and reply.audio
        assert srv.wait_for(lambda: srv.workers() == [], timeout=20)
        again = run(synthesize(srv.uri, SENTENCE))
        listener.check_later(SENTENCE, again.audio)
        assert sum("Starting the worker" in line for line in srv.log) == 2


def test_memory_guard_refuses_to_start_a_worker() -> None:
    with ServerProcess("--min-free-mb", str(10**9)) as srv:
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors and "not enough memory" in reply.errors[0]
        assert srv.workers() == []
        assert run(describe(srv.uri)).tts


@pytest.mark.slow
def test_model_broken_between_bursts_gives_clear_errors_then_recovers(tmp_path) -> None:
    from wyoming_kokoro.catalog.assets import prepare_model, resolve

    good = prepare_model(resolve(None, None, []))
    model = tmp_path / good.name
    shutil.copyfile(good, model)
    with ServerProcess("--model", str(model), "--idle-timeout", "1") as srv:
        assert run(synthesize(srv.uri, SENTENCE)).errors == []
        assert srv.wait_for(lambda: srv.workers() == [], timeout=20)  # burst over

        with model.open("r+b") as file:  # corrupted: same size, other bytes
            file.seek(4096)
            file.write(b"\xff" * 4096)
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors and "corrupt" in reply.errors[0]
        # Home Assistant shows the text: the file's name, not where the server keeps it.
        assert model.name in reply.errors[0] and str(tmp_path) not in reply.errors[0]
        assert run(describe(srv.uri)).tts  # everybody else is still served

        model.unlink()
        missing = run(synthesize(srv.uri, SENTENCE))
        assert missing.errors and "cannot read" in missing.errors[0]
        assert model.name in missing.errors[0] and str(tmp_path) not in missing.errors[0]
        assert str(model) in "".join(srv.log)  # the operator still sees where

        shutil.copyfile(good, model)  # the cause is gone: the next burst works
        again = run(synthesize(srv.uri, SENTENCE))
        assert again.errors == [] and len(again.audio) > 24000


def test_sigterm_stops_server_and_worker() -> None:
    with ServerProcess("--preload") as srv:
        assert srv.wait_for(lambda: len(srv.workers()) == 1, timeout=60)
        [worker] = srv.workers()
        assert srv.stop(signal.SIGTERM) == 0
        assert not os.path.exists(f"/proc/{worker}") or _is_zombie(worker)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=2)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True
