"""Shared test tools: an offline speech recognizer, the real engine, a real server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

READY = re.compile(r"Ready on tcp://127\.0\.0\.1:(\d+)")


class Recognizer:
    """pocketsphinx with the US-English model inside its wheel: a harsh, honest ear."""

    def __init__(self) -> None:
        from pocketsphinx import Decoder

        self._decoder = Decoder(samprate=16000, loglevel="FATAL")

    def transcribe(self, pcm: bytes | np.ndarray, rate: int = 24000) -> str:
        import soxr

        samples = np.frombuffer(pcm, dtype=np.int16) if isinstance(pcm, bytes) else pcm
        audio = samples.astype(np.float32) / 32768.0
        pad = np.zeros(rate // 4, dtype=np.float32)  # the recognizer needs a lead-in
        audio = soxr.resample(np.concatenate([pad, audio, pad]), rate, 16000)
        data = (np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes()
        self._decoder.start_utt()
        self._decoder.process_raw(data, full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp else ""


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: edit distance over the reference's word count."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        prev, row[0] = row[:], i
        for j in range(1, len(hyp) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ref[i - 1] != hyp[j - 1]))
    return row[len(hyp)] / max(1, len(ref))


@pytest.fixture(scope="session")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.fixture(scope="session")
def engine():
    from wyoming_kokoro.assets import resolve
    from wyoming_kokoro.engine import Engine

    loaded = Engine(resolve(None, None, []))
    loaded.warm_up()
    return loaded


def can_mount_privately() -> bool:
    """Can tests mount (tmpfs, read-only binds) in a user+mount namespace of their own?"""
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def children(pid: int) -> list[int]:
    """Direct child processes of pid (the server's worker)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


class ServerProcess:
    """`python -m wyoming_kokoro` on 127.0.0.1, port 0, with its log captured."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, wrapper: list[str] | None = None
    ) -> None:
        # wrapper: a command that execs the server in a changed world (e.g. read-only dirs)
        server = [sys.executable, "-m", "wyoming_kokoro", "--uri", "tcp://127.0.0.1:0", *args]
        self.args = [*(wrapper or []), *server]
        self.env = {**os.environ, **(env or {})}
        self.log: list[str] = []
        self.port = 0
        self._ready = threading.Event()
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ServerProcess:
        self.proc = subprocess.Popen(
            self.args, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=self.env
        )
        threading.Thread(target=self._pump, daemon=True).start()
        if not self._ready.wait(30):
            self.stop()
            raise RuntimeError("server did not start:\n" + "".join(self.log))
        return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            match = READY.search(line)
            if match:
                self.port = int(match.group(1))
                self._ready.set()

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def workers(self) -> list[int]:
        return children(self.pid)

    def wait_for(self, predicate, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return predicate()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """One server shared by a test module; its worker stays loaded between tests."""
    with ServerProcess("--idle-timeout", "120") as running:
        yield running


@pytest.fixture(scope="session")
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")
