"""A real `wyoming-kokoro` server in a subprocess, on 127.0.0.1 with a free port.

Shared by the tests (through conftest) and the benchmarks (bench/client.py), so
both start, watch and stop the server the same way. No pytest here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

READY = re.compile(r"Ready on tcp://127\.0\.0\.1:(\d+)")


def children(pid: int) -> list[int]:
    """Direct child processes of pid (the server's worker)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


class ServerProcess:
    """`python -m wyoming_kokoro` on 127.0.0.1, port 0, with its log captured."""

    start_timeout = 30.0  # seconds until "Ready on …" (the model is not loaded by then)

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
        if not self._ready.wait(self.start_timeout):
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
        """The server's worker processes (not the processes that cut the model and
        teach the voices in the background)."""
        return [
            pid for pid, command in self._children() if b"wyoming_kokoro.synthesis." not in command
        ]

    def teachers(self) -> list[int]:
        """The server's voice teachers (synthesis/teaching.py), which run only when the
        CPU would otherwise idle and end when every voice is taught."""
        teacher = b"wyoming_kokoro.synthesis.teaching"
        return [pid for pid, command in self._children() if teacher in command]

    def _children(self) -> list[tuple[int, bytes]]:
        """The server's living child processes with their command lines."""
        found = []
        for pid in children(self.pid):
            try:
                found.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
            except OSError:
                continue
        return found

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
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
