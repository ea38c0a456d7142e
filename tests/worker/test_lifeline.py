"""The server's children end with it (Linux's parent-death signal), real processes:
the process that cuts the model, and a child whose parent had gone before it asked."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.server_process import children

from wyoming_kokoro.server.worker_handle import process_alive

# Real workers and the model cut: not in the fast tier (script/test --fast).
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
    pytest.mark.model,
]

# A stand-in for the server: starts the cut as the server does, then waits on it.
_SERVER = """
import asyncio
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.server.model_cut import start_build

async def main():
    task = start_build(resolve(None, None, []))
    assert task is not None, "nothing to cut"
    await task

asyncio.run(main())
"""


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if process_alive(pid)]


def _at_normal_priority(pid: int, deadline: float) -> None:
    """The cut runs at the lowest priority, and other test processes keep the CPU
    busy: given back a normal one (where allowed), it reaches its parts sooner."""
    with contextlib.suppress(OSError):
        while os.getpriority(os.PRIO_PROCESS, pid) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)  # lowered between its fork and its exec
        os.setpriority(os.PRIO_PROCESS, pid, 0)


def test_the_model_cut_ends_with_its_killed_server_and_cleans_up(tmp_path: Path) -> None:
    cache, tmpdir = tmp_path / "cache", tmp_path / "tmp"
    cache.mkdir()
    tmpdir.mkdir()
    env = {**os.environ, "KOKORO_CACHE_DIR": str(cache), "TMPDIR": str(tmpdir)}
    server = subprocess.Popen([sys.executable, "-c", _SERVER], env=env)
    cut: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not cut and server.poll() is None and time.monotonic() < deadline:
            cut = children(server.pid)
            time.sleep(0.05)
        assert cut, "the cut never started"
        _at_normal_priority(cut[0], deadline)
        # Well under way: the parts are being written (the whole cut takes far longer).
        while not list(cache.glob(".split*.part")) and time.monotonic() < deadline:
            assert process_alive(cut[0]), "the cut ended early"
            time.sleep(0.05)
        server.kill()
        server.wait(20)
        assert _wait_gone(cut, 30) == []
    finally:
        for pid in cut:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        server.kill()
        server.wait()
    assert list(cache.glob(".split*")) == []  # its half-built parts
    assert os.listdir(tmpdir) == []  # its private temporary directory


def test_a_child_whose_parent_is_already_gone_exits_at_once() -> None:
    # The parent it was told of is not its parent (any more): no signal would come.
    script = (
        "from wyoming_kokoro.lifeline import die_with_parent\n"
        "die_with_parent(1)\n"
        "print('still here')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 1 and "still here" not in result.stdout
    script = script.replace("die_with_parent(1)", "import os; die_with_parent(os.getppid())")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0 and "still here" in result.stdout
