"""The server's log lines carry the time, where nothing else adds it: on a terminal,
in the add-on's log (s6-overlay, Docker); not under systemd, whose journal stamps
every line itself (its `JOURNAL_STREAM` names the stream stderr is). A real server
process, its stderr a file."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.logs import line_format

STAMPED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO ")


def _server_log(tmp_path: Path, journal: bool) -> list[str]:
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        env = {**os.environ, "KOKORO_CACHE_DIR": str(tmp_path / "cache")}
        env.pop("JOURNAL_STREAM", None)
        if journal:  # as systemd sets it when stderr is the journal's stream
            stat = os.fstat(stderr.fileno())
            env["JOURNAL_STREAM"] = f"{stat.st_dev}:{stat.st_ino}"
        server = subprocess.Popen(
            [sys.executable, "-m", "wyoming_kokoro", "--uri", "tcp://127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while "Ready on" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
    return [line for line in log.read_text().splitlines() if "INFO wyoming_kokoro." in line]


@pytest.mark.parametrize("journal", [False, True], ids=["terminal", "journald"])
def test_each_line_is_stamped_unless_journald_stamps_it(tmp_path: Path, journal: bool) -> None:
    lines = _server_log(tmp_path, journal)
    assert any("Ready on" in line for line in lines), lines
    for line in lines:
        assert bool(STAMPED.match(line)) is not journal, line
        assert line.startswith("INFO wyoming_kokoro.") is journal, line


def _stamped_with(named: str) -> bool:
    before = os.environ.get("JOURNAL_STREAM")
    os.environ["JOURNAL_STREAM"] = named
    try:
        return line_format("%(message)s").startswith("%(asctime)s")
    finally:
        if before is None:
            os.environ.pop("JOURNAL_STREAM", None)
        else:
            os.environ["JOURNAL_STREAM"] = before


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_only_stderrs_own_journal_stream_drops_the_stamp(data: st.DataObject) -> None:
    """Whatever JOURNAL_STREAM holds (another stream's, near misses, garbage), lines
    are stamped unless it names stderr's own device and inode."""
    stat = os.fstat(sys.stderr.fileno())
    own = f"{stat.st_dev}:{stat.st_ino}"
    near = [
        own,
        f" {own}",
        f"{own}\n",
        f"{stat.st_dev}:{stat.st_ino + 1}",
        f"{stat.st_ino}:{stat.st_dev}",
    ]
    named = data.draw(st.one_of(st.sampled_from(near), st.text(max_size=30)))
    named = named.replace("\x00", "")  # the environment cannot hold it
    assert _stamped_with(named) is (named != own), named
