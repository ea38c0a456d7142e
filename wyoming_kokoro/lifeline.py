"""A child process that ends with its parent: Linux's parent-death signal.

The server's children (the worker, the waiting parent of `--prefork` and the
process that cuts the model) end by themselves when the server closes their pipe,
but only once they read it: a worker hanging in its model load outlived a
SIGKILLed server for good. With PR_SET_PDEATHSIG the kernel signals the child when
its parent goes, whatever the child is doing. Elsewhere than on Linux nothing changes.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys

_LOGGER = logging.getLogger(__name__)

# The server's pid, for its child to check that it has not already gone.
PARENT_ENV = "WYOMING_KOKORO_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a server's child that calls `die_with_parent` (in the parent)."""
    child = {**(os.environ if env is None else env), PARENT_ENV: str(os.getpid())}
    # onnxruntime's telemetry writes a session file into the temporary directory and a
    # database into ~/.cache on import; a local service has no use for it.
    child.setdefault("ORT_DISABLE_TELEMETRY", "1")
    return child


def parent_from_env() -> int | None:
    """The pid `child_env` recorded (in the child); removed, so no grandchild reads it."""
    value = os.environ.pop(PARENT_ENV, "")
    return int(value) if value.isdigit() else None


def die_with_parent(parent: int | None, sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send `sig` to this process when its parent ends; exit at once
    if `parent` (its pid, when known) has ended already. False where not supported.

    The signal follows the parent *thread* that started this process: the server and
    the waiting parent start their children from their main thread.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            _LOGGER.debug("No parent-death signal: %s", os.strerror(ctypes.get_errno()))
            return False
    except (OSError, AttributeError) as err:
        _LOGGER.debug("No parent-death signal: %s", err)
        return False
    # The parent may have gone before the signal was asked for: none will come then.
    if parent is not None and os.getppid() != parent:
        _LOGGER.info("The parent process %s is gone: exiting", parent)
        os._exit(1)
    return True
