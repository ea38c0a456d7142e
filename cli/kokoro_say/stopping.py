"""The signals that stop a run: SIGTERM (a service stop, a timeout), SIGINT (Ctrl-C)
and SIGHUP (the terminal closed) end it as an error does, so the partial files are
removed and espeak's backends finalized, and the exit code is the shell's 128 + the
signal's number. SIGKILL cannot be caught: its partial file is swept by the next run
that writes the same file (partial.py)."""

from __future__ import annotations

import signal
import sys

STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


# The signal that stopped the run: a signal that lands inside an import (onnxruntime's
# native module) comes out as that import's ImportError, so the run ends by this.
received: signal.Signals | None = None


class Stopped(SystemExit):
    """The run was told to stop by a signal (a SystemExit: no `except Exception`
    swallows it, and every `finally` on the way out runs)."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)


def _stop(signum: int, _frame: object) -> None:
    global received
    # Once: a second signal (the terminal's SIGHUP after Ctrl-C) must not cut short the
    # clean-up the first one started.
    for sig in STOPPING:
        signal.signal(sig, signal.SIG_IGN)
    received = signal.Signals(signum)
    raise Stopped(signum)


def stop_cleanly() -> None:
    """Turn the stopping signals into `Stopped`, except those the caller chose to
    ignore (`nohup`, a background job's SIGINT): they stay ignored."""
    for sig in STOPPING:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _stop)


def exit_if_stopped() -> None:
    """In an `except` on the way out: if a signal ended the run, whatever error it
    came out as, say so in one line and exit with 128 + its number."""
    if received is not None:
        print(f"kokoro-say: stopped by {received.name}", file=sys.stderr)
        raise SystemExit(128 + received) from None
