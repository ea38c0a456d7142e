"""What kokoro-say leaves behind: nothing in the temporary directory, no partial file,
whether it ends normally, on SIGTERM, SIGINT, SIGHUP or SIGKILL, or on a full disk."""

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


def _stopped(
    sig: int, out: Path, tmpdir: Path, speaking: bool = True, *more: str
) -> tuple[int, str]:
    """kokoro-say sent `sig` once its partial file exists (while the model loads), or
    once audio is in it (`speaking`): its exit code and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kokoro_say.main", LONG, "-o", str(out / "a.wav"), "-q", *more],
        env=_env(tmpdir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    least = 10_000 if speaking else 0  # bytes: more than a WAV header
    try:
        # Then its espeak backends and the partial file exist.
        deadline = time.monotonic() + 120
        while process.poll() is None and not any(p.stat().st_size > least for p in _files(out)):
            assert time.monotonic() < deadline, "kokoro-say never started writing"
            time.sleep(0.05)
        process.send_signal(sig)
        code = process.wait(60)
    finally:
        process.kill()
        process.wait()
    return code, process.stderr.read().decode() if process.stderr else ""


def _files(directory: Path) -> list[Path]:
    found = []
    for path in directory.iterdir():
        try:
            path.stat()
        except FileNotFoundError:  # renamed or removed meanwhile
            continue
        found.append(path)
    return found


@pytest.mark.parametrize(
    ("sig", "speaking", "captions"),
    [
        (signal.SIGTERM, False, False),
        (signal.SIGTERM, True, False),
        (signal.SIGINT, True, False),
        (signal.SIGHUP, True, False),
        (signal.SIGHUP, True, True),
    ],
    ids=["SIGTERM-loading", "SIGTERM", "SIGINT", "SIGHUP", "SIGHUP-captions"],
)
def test_a_stopped_run_leaves_no_copies_and_no_partial_file(
    tmp_path: Path, sig: int, speaking: bool, captions: bool
) -> None:
    # Every way a run is told to stop: a service stop, Ctrl-C, the terminal closed; and
    # a stop that lands while the model loads (inside an import of native code).
    tmpdir, out = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    out.mkdir()
    more = ("--captions", str(out / "a.srt")) if captions else ()
    code, err = _stopped(sig, out, tmpdir, speaking, *more)
    assert code == 128 + sig, (code, err)  # the shell's way of saying "stopped by sig"
    said = err.strip().splitlines()
    assert said[-1:] == [f"kokoro-say: stopped by {signal.Signals(sig).name}"], err
    assert "Traceback" not in err, err
    assert os.listdir(tmpdir) == []
    assert os.listdir(out) == [], err


def test_a_killed_runs_partial_file_is_removed_by_the_next_run(tmp_path: Path) -> None:
    # SIGKILL gives no chance to remove anything: the hidden partial file stays until
    # the next run that writes the same file sees its writer is gone.
    tmpdir, out = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    out.mkdir()
    code, _ = _stopped(signal.SIGKILL, out, tmpdir)
    assert code == -signal.SIGKILL
    assert os.listdir(tmpdir) == []
    left = os.listdir(out)
    assert len(left) == 1 and left[0].startswith(".a.wav."), left
    result = _say(SHORT, "-o", str(out / "a.wav"), "-q", env=_env(tmpdir))
    assert result.returncode == 0, result.stderr.decode()
    assert os.listdir(out) == ["a.wav"]


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


def test_under_nohup_a_sighup_is_still_ignored(tmp_path: Path) -> None:
    # `nohup kokoro-say …` asks to outlive the terminal: the SIGHUP handler that
    # cleans up must not replace an ignored SIGHUP.
    tmpdir, out = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    out.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "kokoro_say.main", SHORT, "-o", str(out / "a.wav"), "-q"],
        env=_env(tmpdir),
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 120
        while not _files(out) and process.poll() is None:
            assert time.monotonic() < deadline, "kokoro-say never started writing"
            time.sleep(0.05)
        process.send_signal(signal.SIGHUP)
        _, err = process.communicate(timeout=300)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, err.decode()
    assert os.listdir(out) == ["a.wav"]
