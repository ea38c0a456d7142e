"""A running server takes up the model's cut once its background process has made it:
word times come at the next request, not after the worker's idle exit or a restart.
A real server on a cache without the cut, real HTTP requests, a real cut."""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.http_client import http_base, http_server
from support.server_process import ServerProcess, children

from wyoming_kokoro.catalog.cut import VERIFIED

pytestmark = pytest.mark.model

TEXT = "The garage door is open and the kitchen light is on."


def uncut(source: Path, target: Path) -> Path:
    """`target`: a cache like `source` with the model's files but no cut entry."""
    target.mkdir(parents=True)
    for entry in source.iterdir():
        if not entry.name.startswith("split") and entry.name not in ("priors", "loudness.json"):
            (target / entry.name).symlink_to(entry.resolve())
    return target


def captioned(server: ServerProcess) -> list[dict[str, Any]]:
    request = urllib.request.Request(
        http_base(server) + "/dev/captioned_speech",
        json.dumps(
            {"input": TEXT, "voice": "jm_kumo", "response_format": "pcm", "stream": False}
        ).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        words: list[dict[str, Any]] = json.loads(reply.read())["timestamps"]
    return words


def _cut_at_normal_priority(server: int) -> None:
    """The cut runs at nice 19 and the other test processes keep the CPU busy: given
    back a normal priority (where allowed), it is done in minutes."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in children(server):
            with contextlib.suppress(OSError):
                if b"synthesis.cutting" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.setpriority(os.PRIO_PROCESS, pid, 0)
                    return
        time.sleep(0.05)


@pytest.mark.timeout(900, func_only=True)  # a cut is a minute of CPU or more under load
def test_word_times_come_once_the_cut_is_made_without_a_restart(tmp_path: Path) -> None:
    cache = uncut(Path(os.environ["KOKORO_CACHE_DIR"]), tmp_path / "cache")
    env = {"KOKORO_CACHE_DIR": str(cache)}
    # The worker would stay for ten minutes: only taking up the cut brings the times.
    # No teaching: the cut alone is what this is about (and a minute less of CPU).
    args = ("--idle-timeout", "600", "--voice", "jm_kumo", "--no-teaching")
    with http_server(*args, env=env) as srv:
        _cut_at_normal_priority(srv.pid)
        first = captioned(srv)
        assert [w["word"] for w in first] == TEXT.split()
        assert all(w["start_time"] is None for w in first), first  # no cut yet: no times
        (worker,) = srv.workers()
        made = srv.wait_for(
            lambda: any((e / VERIFIED).is_file() for e in cache.glob("split*")), 800
        )
        assert made, "".join(srv.log)
        # The mark is the cut process's last step; the server hears of it when it ends.
        srv.wait_for(lambda: "takes up the cut" in "".join(srv.log), 60)
        second = captioned(srv)
        assert srv.proc is not None and srv.proc.poll() is None  # the same server
        assert [w["word"] for w in second] == TEXT.split()
        assert all(w["start_time"] is not None for w in second), (second, "".join(srv.log))
        assert worker not in srv.workers()  # a new worker, with the cut
        log = "".join(srv.log)  # the cut's own lines are in it too
        assert "Cut the model" in log and "Teaching voice" not in log  # not in the cut either
