"""Faults of the machine, not of the client: a read-only filesystem at boot, a server
killed while its worker hangs."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import time
from pathlib import Path

import pytest
from support.privileges import can_mount_privately
from support.run_cache import unlearned
from support.server_process import ServerProcess, children
from support.wyoming_io import run, synthesize
from wyoming.event import write_event
from wyoming.tts import Synthesize

from wyoming_kokoro.server.worker_handle import process_alive

SENTENCE = "The garage door has been open for ten minutes."


def read_only(*dirs: Path) -> list[str]:
    """A command prefix that runs the rest with `dirs` mounted read-only (EROFS)."""
    mounts = " && ".join(
        f"mount --bind {shlex.quote(str(d))} {shlex.quote(str(d))} && "
        f"mount -o remount,bind,ro {shlex.quote(str(d))}"
        for d in dirs
    )
    return ["unshare", "-rm", "sh", "-c", f'{mounts} && exec "$@"', "sh"]


@pytest.mark.skipif(not can_mount_privately(), reason="needs user+mount namespaces")
def test_read_only_data_and_cache_dirs_still_speak(tmp_path: Path, listener) -> None:
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    cache.mkdir()
    args = ["--data-dir", str(data), "--download", "int8"]
    # Nothing listens on port 9 here: the download fails at once, as offline.
    args += ["--download-url", "http://127.0.0.1:9/", "--idle-timeout", "1"]
    env = {"KOKORO_CACHE_DIR": str(cache)}
    with ServerProcess(*args, env=env, wrapper=read_only(data, cache)) as srv:
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == []
        listener.check_later(SENTENCE, reply.audio)
        log = "".join(srv.log)
        assert "Download of the int8 model failed" in log
        assert "loading the embedded model from memory" in log
        assert srv.wait_for(lambda: srv.workers() == [], timeout=20)
        # A second burst works the same way: nothing was half-written.
        assert run(synthesize(srv.uri, SENTENCE)).errors == []
    assert list(data.iterdir()) == [] and list(cache.iterdir()) == []


@pytest.mark.skipif(not can_mount_privately(), reason="needs user+mount namespaces")
def test_no_writable_temporary_directory_still_speaks(tmp_path: Path, listener) -> None:
    # A locked-down add-on: read-only root, no tmpfs on /tmp. espeak's loader copies
    # its library into a temporary directory; the worker falls back to the cache.
    cache, home = unlearned(tmp_path / "cache"), tmp_path / "home"
    home.mkdir()
    mounts = " && ".join(
        f"mount --bind {d} {d} && mount -o remount,bind,ro {d}"
        for d in ("/tmp", "/var/tmp", shlex.quote(str(home)))
    )
    # /tmp read-only first, then the cache (inside it) bound writable again.
    wrapper = [
        "unshare", "-rm", "sh", "-c",
        f"{mounts} && mount --bind {shlex.quote(str(cache))} {shlex.quote(str(cache))} "
        f"&& mount -o remount,bind,rw {shlex.quote(str(cache))} "
        f'&& cd {shlex.quote(str(home))} && exec "$@"',
        "sh",
    ]  # fmt: skip
    env = {"KOKORO_CACHE_DIR": str(cache), "TMPDIR": "", "TEMP": "", "TMP": ""}
    with ServerProcess("--idle-timeout", "30", env=env, wrapper=wrapper) as srv:
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == [], "".join(srv.log)
        listener.check_later(SENTENCE, reply.audio)
    assert (cache / "tmp").is_dir()


@pytest.mark.skipif(not can_mount_privately(), reason="needs user+mount namespaces")
def test_a_full_cache_disk_still_speaks(tmp_path: Path, listener) -> None:
    # A 1 MB cache: neither the embedded model nor its optimized copy fits (ENOSPC).
    cache = tmp_path / "cache"
    cache.mkdir()
    wrapper = [
        "unshare", "-rm", "sh", "-c",
        f'mount -t tmpfs -o size=1m tmpfs {shlex.quote(str(cache))} && exec "$@"', "sh",
    ]  # fmt: skip
    env = {"KOKORO_CACHE_DIR": str(cache)}
    with ServerProcess("--idle-timeout", "1", env=env, wrapper=wrapper) as srv:
        replies = []
        for _ in range(2):  # every burst, not only the first
            reply = run(synthesize(srv.uri, SENTENCE))
            assert reply.errors == [], "".join(srv.log)
            replies.append(reply.audio)
            assert srv.wait_for(lambda: srv.workers() == [], timeout=20)
        assert "loading the embedded model from memory" in "".join(srv.log)
    # Heard as one clip: the same sentence twice, told apart by time, lost its words
    # to the clip beside it.
    listener.check_later((SENTENCE, SENTENCE), replies)


def _descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *_descendants(child)]
    return found


@pytest.mark.parametrize("prefork", [False, True])
def test_a_worker_hanging_in_its_load_ends_with_its_killed_server(
    tmp_path: Path, prefork: bool
) -> None:
    # A model that never finishes loading (a FIFO: opening it blocks for ever); the
    # server is SIGKILLed meanwhile and can end nothing itself: the kernel must.
    from wyoming_kokoro.catalog.assets import resolve

    model = tmp_path / "hangs.onnx"  # not a published name: never cut
    model.touch()  # a file at start-up; the FIFO replaces it before the first burst
    args = ["--model", str(model), "--voices", str(resolve(None, None, []).voices)]
    args += ["--idle-timeout", "60", *(["--prefork"] if prefork else [])]
    seen: list[int] = []
    try:
        with ServerProcess(*args, env={"TMPDIR": str(tmp_path)}) as srv:
            os.mkfifo(tmp_path / "fifo")
            os.replace(tmp_path / "fifo", model)
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as client:
                write_event(Synthesize(text=SENTENCE).event(), client.makefile("wb"))
                # The worker (forked by the waiting parent with --prefork) is loading.
                hanging = 2 if prefork else 1
                assert srv.wait_for(lambda: len(_descendants(srv.pid)) >= hanging, 30)
                seen = _descendants(srv.pid)
                srv.stop(signal.SIGKILL)
            deadline = time.monotonic() + 20
            while any(process_alive(pid) for pid in seen) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [pid for pid in seen if process_alive(pid)] == [], "".join(srv.log)
    finally:
        for pid in seen:  # whatever the outcome, leave nothing for the next tests
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
