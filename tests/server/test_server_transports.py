"""The server over zeroconf, unix sockets and stdio, and its shutdown."""

from __future__ import annotations

import asyncio
import io
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from support.server_process import ServerProcess
from support.wyoming_io import run
from support.zeroconf_lookup import lookup
from wyoming.client import AsyncClient
from wyoming.event import read_event, write_event
from wyoming.info import Describe, Info


def test_zeroconf_registration_and_removal_on_sigterm() -> None:
    name = f"kokoro-test-{uuid.uuid4().hex[:8]}"
    args = ("--zeroconf", name, "--zeroconf-address", "127.0.0.1")
    with ServerProcess(*args, "--zeroconf-interface", "127.0.0.1") as srv:
        deadline = time.monotonic() + 15
        while not any("Zeroconf" in line or "zeroconf" in line for line in srv.log):
            assert time.monotonic() < deadline, "".join(srv.log)
            time.sleep(0.1)
        info = run(lookup(name))
        assert info is not None and info.port == srv.port
        assert info.parsed_addresses() == ["127.0.0.1"]
        assert srv.stop(signal.SIGTERM) == 0
    assert run(lookup(name, timeout_ms=1500)) is None


def test_unix_socket(tmp_path: Path) -> None:
    sock = tmp_path / "kokoro.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro", "--uri", f"unix://{sock}"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Ready on unix://" in line:
                break

        async def describe() -> Info:
            async with AsyncClient.from_uri(f"unix://{sock}") as client:
                await client.write_event(Describe().event())
                event = await asyncio.wait_for(client.read_event(), 5)
                assert event is not None
                return Info.from_event(event)

        assert run(describe()).tts[0].name == "kokoro"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_stdio() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro", "--uri", "stdio://"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    write_event(Describe().event(), proc.stdin)
    proc.stdin.flush()
    event = read_event(proc.stdout)
    assert event is not None and event.type == "info"
    proc.stdin.close()  # end of input ends the server, no signal needed
    assert proc.wait(20) == 0


def test_stdio_speaks_a_piped_request_to_the_end(listener) -> None:
    """`… | wyoming-kokoro --uri stdio://`: input ends right after the request, and the
    utterance is still spoken whole (end of input is not a hang-up on stdio)."""
    from wyoming.tts import Synthesize

    text = "The washing machine has finished."
    request = io.BytesIO()
    write_event(Synthesize(text=text).event(), request)
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_kokoro", "--uri", "stdio://"],
        input=request.getvalue(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    replies, audio = io.BytesIO(result.stdout), b""
    types = []
    while (event := read_event(replies)) is not None:
        types.append(event.type)
        audio += event.payload or b""
    assert types[0] == "audio-start" and types[-1] == "audio-stop", types
    listener.check_later(text, audio)


def test_the_server_runs_where_signals_cannot_be_watched() -> None:
    # In a thread (as in some LXC/Proxmox set-ups, or embedded), asyncio refuses
    # signal handlers; the server used to die at start with RuntimeError.
    import logging
    import re
    import threading

    from wyoming_kokoro.server.startup import run_server
    from wyoming_kokoro.settings import SchedulerSettings, Settings, WyomingSettings

    ready = threading.Event()
    found: dict[str, object] = {}

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if match := re.search(r"Ready on tcp://127\.0\.0\.1:(\d+)", record.getMessage()):
                found["port"] = int(match.group(1))
                ready.set()

    async def main() -> None:
        found["loop"], found["task"] = asyncio.get_running_loop(), asyncio.current_task()
        await run_server(
            Settings(
                wyoming=WyomingSettings(uri="tcp://127.0.0.1:0"),
                scheduler=SchedulerSettings(idle_timeout=1),
            )
        )

    def run_in_thread() -> None:
        try:
            asyncio.run(main())
        except BaseException as err:  # reported to the test below
            found["error"] = err
            ready.set()

    handler = Catch()
    logging.getLogger("wyoming_kokoro.server.startup").addHandler(handler)
    logging.getLogger("wyoming_kokoro.server.startup").setLevel(logging.INFO)
    thread = threading.Thread(target=run_in_thread, daemon=True)
    thread.start()
    try:
        assert ready.wait(30) and "error" not in found, found.get("error")

        async def describe() -> str:
            async with AsyncClient.from_uri(f"tcp://127.0.0.1:{found['port']}") as client:
                await client.write_event(Describe().event())
                event = await asyncio.wait_for(client.read_event(), 10)
                return event.type if event else ""

        assert run(describe()) == "info"
    finally:
        logging.getLogger("wyoming_kokoro.server.startup").removeHandler(handler)
        loop = found.get("loop")
        if loop is not None:
            loop.call_soon_threadsafe(found["task"].cancel)  # type: ignore[union-attr]
        thread.join(30)
    assert not thread.is_alive()
    assert isinstance(found.get("error"), asyncio.CancelledError) or "error" not in found
