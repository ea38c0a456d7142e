"""Stopping a running onnxruntime call from another thread.

onnxruntime checks a run's `terminate` flag between operators, so a call can be
abandoned within milliseconds when someone else needs the model now. A `StopSwitch`
holds that flag for one model (one or several sessions run one call at a time) and
knows which tagged call is running, so a stop never hits the wrong call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# onnxruntime's "fatal" log level for these runs: a stopped run otherwise prints our
# own stop as a coloured error line on stderr. It is read as a run begins, so it holds
# for every run; a run's real failure still raises (and is logged by us), and the
# session's own log (loading, providers) keeps its level.
_QUIET = 4


class Interrupted(RuntimeError):
    """A model call was stopped from another thread (see `StopSwitch.interrupt`)."""


class StopSwitch:
    """The run options of one tagged call at a time, and a way to stop it."""

    def __init__(self) -> None:
        import onnxruntime as ort

        self.options = ort.RunOptions()
        self.options.log_severity_level = _QUIET
        self._lock = threading.Lock()
        self._running: object = None  # the tag of the call in progress
        self._pending: object = None  # stopped before its run began
        self._stopped = False

    @property
    def current_tag(self) -> object:
        """The tag of the call whose run is in progress, or None."""
        return self._running

    @property
    def pending_tag(self) -> object:
        """The tag of a call stopped before its run began, or None."""
        return self._pending

    @contextmanager
    def running(self, tag: object) -> Iterator[Any]:
        """The run options for the call `tag` (`Interrupted` if it was stopped)."""
        with self._lock:
            # A stop that came just before its run began still applies to it.
            stop = self._pending is not None and self._pending == tag
            self._running, self._stopped, self._pending = tag, stop, None
            self.options.terminate = stop
        try:
            yield self.options
        except Exception as err:
            if self._stopped:
                raise Interrupted("the call was interrupted") from err
            raise
        finally:
            with self._lock:
                self._running = None
                self.options.terminate = False

    def interrupt(self, tag: object) -> bool:
        """Stop the call tagged `tag`: the running one (True), or the next to begin.

        A stop that arrives just before its call begins still applies to it; one
        that comes after its call ended costs the next call of that tag a retry
        unless `forget` drops it.
        """
        with self._lock:
            if self._running is None or self._running != tag:
                self._pending = tag
                return False
            self._stopped = True
            self.options.terminate = True
            return True

    def forget(self, tag: object) -> None:
        """Drop a stop for `tag` that came while no call of it was running."""
        with self._lock:
            if self._pending == tag:
                self._pending = None


class Interruptible:
    """A session whose calls pass the switch's run options (kokoro-onnx calls
    `sess.run(None, inputs)`; this stand-in adds them)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.switch = StopSwitch()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)  # inputs, outputs, metadata: as the session

    def run(self, names: Any, feed: Any, run_options: Any = None) -> Any:
        return self._session.run(names, feed, self.switch.options)


class Stops:
    """Whether a tagged call should let others have the model, with the switches that
    stop its runs: the plan or a whole call's, and (decoding in windows) those of its
    windows after the first.

    Set from the thread that reads messages and read from the one that decodes, so
    under one lock, and the stop before the flag: a stop spent by `spent` is never
    followed by a stale one.
    """

    def __init__(self, switch: StopSwitch, windows: StopSwitch | None) -> None:
        self._switch = switch
        self._windows = windows
        self._lock = threading.Lock()
        self._yield_for: object = None  # a call that should let others go

    def let_others_go(self, tag: object) -> None:
        """Stop `tag`'s window after the first if one runs, and have it pause; a plan,
        a first window or a whole call goes on. Nothing without windows."""
        if self._windows is not None:
            with self._lock:
                self._windows.interrupt(tag)
                self._yield_for = tag

    def interrupt(self, tag: object) -> bool:
        """Stop whatever of `tag` runs and have it pause; False if nothing of it ran."""
        with self._lock:
            stopped = False
            if self._windows is not None:
                stopped = self._windows.interrupt(tag)
                self._yield_for = tag
            return self._switch.interrupt(tag) or stopped

    def spent(self, tag: object) -> bool:
        """Whether `tag` was asked to pause; the ask and its stops are spent then."""
        with self._lock:
            if self._yield_for is None or self._yield_for != tag:
                return False
            self._clear(tag)
            return True

    def done(self, tag: object) -> None:
        """`tag`'s call ended: nothing is left to pause, no stop must outlive it."""
        with self._lock:
            self._clear(tag)

    def _clear(self, tag: object) -> None:
        if self._yield_for == tag:  # another call's ask waits for that call's next window
            self._yield_for = None
        self._switch.forget(tag)
        if self._windows is not None:
            self._windows.forget(tag)
