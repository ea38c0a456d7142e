"""Test-only: the worker kills itself on a marked piece, as a native library's crash
would end it. Not a feature: nothing but the tests sets its variable."""

from __future__ import annotations

import logging
import os
import signal

_LOGGER = logging.getLogger(__name__)

# A piece whose text holds this variable's value kills the worker when it is sent.
CRASH_FOR_TESTS_ENV = "KOKORO_TEST_ONLY_CRASH_MARKER"


def crash_marker() -> str | None:
    """The marker the tests set (None: the hook is off, as it always is in use)."""
    return os.environ.get(CRASH_FOR_TESTS_ENV) or None


def crash_for_tests() -> None:
    """Die of a segfault (SIGSEGV), with a warning that it is on purpose."""
    _LOGGER.warning("Crashing on purpose (%s is set): a test-only hook", CRASH_FOR_TESTS_ENV)
    os.kill(os.getpid(), signal.SIGSEGV)
