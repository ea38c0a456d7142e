"""What kokoro-say leaves behind: nothing in the temporary directory, no partial file,
whether it ends normally, on SIGTERM or SIGKILL, or on a full disk."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import soundfile

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model

SHORT = "The door is open."
LONG = " ".join(["The heating schedule switched to evening mode an hour ago."] * 20)


def _env(tmpdir: Path) -> dict[str, str]:
    # Not measured by coverage: its data file would be written into the checked dirs.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    return {**env, "TMPDIR": str(tmpdir)}


def _say(*args: str, env: dict[str, str], limit: int | None = None) -> subprocess.CompletedProcess:
    def limit_file_size() -> None:
        # A file-size limit stands in for a full disk: past it a write fails (EFBIG;
        # Python ignores SIGXFSZ).
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
        preexec_fn=limit_file_size,
    )


def test_runs_leave_nothing_in_the_temporary_directory(tmp_path: Path) -> None:
    tmpdir, out = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    out.mkdir()
    for _ in range(2):
        result = _say(SHORT, "-o", str(out / "a.wav"), "-q", env=_env(tmpdir))
        assert result.returncode == 0, result.stderr.decode()
        assert sorted(os.listdir(tmpdir)) == []
    assert os.listdir(out) == ["a.wav"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_run_leaves_no_copies_and_no_partial_file(tmp_path: Path, sig: int) -> None:
    tmpdir, out = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    out.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "kokoro_say.main", LONG, "-o", str(out / "a.wav"), "-q"],
        env=_env(tmpdir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # Killed while it speaks: its espeak backends and the partial file exist then.
        deadline = time.monotonic() + 120
        while not list(out.iterdir()) and process.poll() is None:
            assert time.monotonic() < deadline, "kokoro-say never started writing"
            time.sleep(0.05)
        process.send_signal(sig)
        code = process.wait(60)
    finally:
        process.kill()
        process.wait()
    assert code == -sig or code == 128 + sig, code
    assert os.listdir(tmpdir) == []
    if sig == signal.SIGTERM:  # SIGKILL gives no chance to remove it
        assert os.listdir(out) == [], process.stderr.read().decode() if process.stderr else ""


@pytest.mark.parametrize("fmt", ["flac", "ogg", "wav"])
def test_a_full_disk_fails_in_one_line_and_leaves_no_file(tmp_path: Path, fmt: str) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = _env(tmpdir)
    whole = tmp_path / f"whole.{fmt}"
    args = ("--threads", "1", "-q")
    assert _say(SHORT, "-o", str(whole), *args, env=env).returncode == 0
    size = whole.stat().st_size
    whole.unlink()
    # One byte short: libsndfile writes the last of a FLAC or OGG file on close, and
    # ignored that failure there.
    out = tmp_path / f"out.{fmt}"
    result = _say(SHORT, "-o", str(out), *args, env=env, limit=size - 1)
    err = result.stderr.decode()
    assert result.returncode != 0, (size, soundfile.info(out) if out.exists() else None)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"out.{fmt}" in lines[0] and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]
