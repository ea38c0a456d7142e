"""How many onnxruntime threads every synthesis in the tests uses: one.

script/test runs three test processes on the machine's cores. One thread per
synthesis wastes no CPU on threads waiting for each other, and a third process keeps
the cores busy while another waits on a socket, a subprocess or a timer.
"""

from __future__ import annotations

import os

THREADS = 1


def one_thread_each() -> None:
    """Servers, workers and kokoro-say started from now on use THREADS (through
    their `--threads` option's environment variable), unless the caller set it."""
    os.environ.setdefault("KOKORO_THREADS", str(THREADS))
