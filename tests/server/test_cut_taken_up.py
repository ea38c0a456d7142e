"""A running server takes up the model's cut once its background process has made it:
word times come at the next request, not after the worker's idle exit or a restart.
A real server on a cache without the cut, real HTTP requests; the cut the server
waits for is played by the test (support/run_cache.playing_the_cut)."""

from __future__ import annotations

import contextlib
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.http_client import http_base, http_server
from support.run_cache import playing_the_cut
from support.server_process import ServerProcess, children

from wyoming_kokoro.catalog.cut import cut_dir
from wyoming_kokoro.catalog.files import MODEL_FILES

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


def _cutting(server: int) -> bytes:
    """The command line of the server's cut process (empty while it has none)."""
    for pid in children(server):
        with contextlib.suppress(OSError):
            line = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"synthesis.cutting" in line:
                return line
    return b""


@pytest.mark.timeout(300, func_only=True)
def test_word_times_come_once_the_cut_is_made_without_a_restart(tmp_path: Path) -> None:
    cache = uncut(Path(os.environ["KOKORO_CACHE_DIR"]), tmp_path / "cache")
    entry = cut_dir(cache / MODEL_FILES["int8"].name, cache)
    assert entry is not None
    env = {"KOKORO_CACHE_DIR": str(cache)}
    # The worker would stay for ten minutes: only taking up the cut brings the times.
    args = ("--idle-timeout", "600", "--voice", "jm_kumo", "--no-teaching")
    with contextlib.ExitStack() as held:
        place = held.enter_context(playing_the_cut(entry))
        with http_server(*args, env=env) as srv:
            # The server's cut starts at once, and waits for the lock the test holds.
            assert srv.wait_for(lambda: "holds the model's cut lock" in "".join(srv.log), 60)
            assert b"--teach" not in _cutting(srv.pid)  # --no-teaching: not in the cut either
            first = captioned(srv)
            assert [w["word"] for w in first] == TEXT.split()
            assert all(w["start_time"] is None for w in first), first  # no cut yet: no times
            (worker,) = srv.workers()
            place()
            held.close()  # the server's cut finds the model cut, and ends
            assert srv.wait_for(lambda: "takes up the cut" in "".join(srv.log), 120)
            second = captioned(srv)
            assert srv.proc is not None and srv.proc.poll() is None  # the same server
            assert [w["word"] for w in second] == TEXT.split()
            assert all(w["start_time"] is not None for w in second), (second, "".join(srv.log))
            assert worker not in srv.workers()  # a new worker, with the cut
