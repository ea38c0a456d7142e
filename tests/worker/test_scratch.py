"""The worker's temporary directory: its own, and swept once no worker holds it."""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

_TAKE = """
import tempfile
from wyoming_kokoro.worker.scratch import own_tempdir
scratch = own_tempdir()
print(scratch.path if scratch else "none")
print(tempfile.mkdtemp())
"""


def _take(base: Path) -> tuple[str, Path]:
    env = {**os.environ, "TMPDIR": str(base)}
    run = subprocess.run(
        [sys.executable, "-c", _TAKE], text=True, capture_output=True, check=True, env=env
    )
    own, made = run.stdout.split()
    return own, Path(made)


def _left(base: Path, name: str, lock: bool = True) -> Path:
    path = base / name
    (path / "tmpabc").mkdir(parents=True)
    (path / "tmpabc" / "libespeak-ng.so").write_bytes(bytes(1024))
    if lock:
        (path / ".lock").touch()
    return path


def test_a_worker_takes_a_private_directory_and_sweeps_those_nobody_holds(
    tmp_path: Path,
) -> None:
    gone = _left(tmp_path, "wyoming-kokoro-4242-abcd")  # its lock file, unlocked
    running = _left(tmp_path, "wyoming-kokoro-4243-efgh")
    held = os.open(running / ".lock", os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # as its worker holds it
    starting = _left(tmp_path, "wyoming-kokoro-4244-ijkl", lock=False)  # no lock yet
    crashed = _left(tmp_path, "wyoming-kokoro-4245-mnop", lock=False)
    hour_ago = time.time() - 3600
    os.utime(crashed, (hour_ago, hour_ago))
    odd = [_left(tmp_path, f"wyoming-kokoro-{name}", lock=False) for name in ("9" * 20, "²")]
    (tmp_path / "wyoming-kokoro-file").write_text("not a directory")
    try:
        own, made = _take(tmp_path)
    finally:
        os.close(held)
    assert Path(own).parent == tmp_path and Path(own).name.startswith("wyoming-kokoro-")
    assert made.parent == Path(own)  # the process's temporary files go there
    assert stat.S_IMODE(Path(own).stat().st_mode) == 0o700
    assert not gone.exists() and not crashed.exists()
    assert running.is_dir() and starting.is_dir() and all(path.is_dir() for path in odd)


def test_the_directory_is_swept_only_after_its_worker_has_gone(tmp_path: Path) -> None:
    first, _ = _take(tmp_path)  # that process has exited: its lock went with it
    second, _ = _take(tmp_path)
    assert not Path(first).exists() and Path(second).is_dir()
