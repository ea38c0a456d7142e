"""The worker's temporary directory: its own, and swept once the worker is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_TAKE = """
import tempfile
from wyoming_kokoro.worker.scratch import own_tempdir
own_tempdir()
print(tempfile.mkdtemp())
"""


def test_a_worker_takes_its_own_directory_and_sweeps_those_of_gone_workers(
    tmp_path: Path,
) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    left = tmp_path / f"wyoming-kokoro-{gone.stdout.strip()}"
    (left / "tmpabc").mkdir(parents=True)
    (left / "tmpabc" / "libespeak-ng.so").write_bytes(bytes(1024))
    running = tmp_path / f"wyoming-kokoro-{os.getpid()}"
    running.mkdir()
    other = tmp_path / "wyoming-kokoro-notes"
    other.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    made = subprocess.run(
        [sys.executable, "-c", _TAKE], text=True, capture_output=True, check=True, env=env
    )
    created = Path(made.stdout.strip())
    assert created.parent.parent == tmp_path
    assert created.parent.name.startswith("wyoming-kokoro-")
    assert created.parent != running
    assert not left.exists()  # its process is gone
    assert running.is_dir() and other.is_dir()  # a running worker's, and not a worker's
