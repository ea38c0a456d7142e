"""The voice teacher beside a real server: it starts once the model is cut, runs only
when the CPU would otherwise idle, is no worker, and ends with its server however the
server ends. What it teaches and in which order: tests/synthesis/test_teaching*.py."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest
from support.run_cache import NO_TEACHING, linked
from support.server_process import ServerProcess

pytestmark = pytest.mark.model


def test_the_teacher_idles_beside_the_server_and_ends_with_it(tmp_path: Path) -> None:
    cache = linked(Path(os.environ["KOKORO_CACHE_DIR"]), tmp_path / "cache")
    env = {"KOKORO_CACHE_DIR": str(cache), NO_TEACHING: "0"}
    with ServerProcess("--idle-timeout", "60", env=env) as srv:
        assert srv.wait_for(lambda: srv.teachers() != [], 30), "".join(srv.log)
        (teacher,) = srv.teachers()
        assert srv.workers() == []
        assert os.sched_getscheduler(teacher) == os.SCHED_IDLE
        assert os.getpriority(os.PRIO_PROCESS, teacher) == 19
        # It runs only when the CPU would idle, and the other test processes keep it
        # busy: given back a normal priority (where allowed), it is seen to end in time.
        with contextlib.suppress(OSError):
            os.sched_setscheduler(teacher, os.SCHED_OTHER, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, teacher, 0)
        os.kill(srv.pid, signal.SIGKILL)  # no clean-up by the server at all
        assert srv.wait_for(lambda: ended(teacher), 10)


def ended(pid: int) -> bool:
    """Gone, or a zombie that its new parent has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_no_teaching_starts_no_teacher(tmp_path: Path) -> None:
    cache = linked(Path(os.environ["KOKORO_CACHE_DIR"]), tmp_path / "cache")
    env = {"KOKORO_CACHE_DIR": str(cache), NO_TEACHING: "1"}
    with ServerProcess("--idle-timeout", "60", env=env) as srv:
        assert not srv.wait_for(lambda: srv.teachers() != [], 3)
