"""`python -m wyoming_kokoro.worker`: the worker process's entry point (stdout kept for
the protocol, a usable temporary directory, then the loop or, with `--zygote`, the
waiting parent)."""

from __future__ import annotations

import logging
import os
import sys
from typing import BinaryIO

from wyoming_kokoro.lifeline import die_with_parent, parent_from_env
from wyoming_kokoro.logs import line_format
from wyoming_kokoro.worker.loop import run_loop
from wyoming_kokoro.worker.scratch import own_tempdir
from wyoming_kokoro.worker.zygote import wait_and_fork


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """Keep fd 1 for the protocol only: anything a library prints goes to stderr."""
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, proto_out


def _ensure_tempdir() -> None:
    """phonemizer copies libespeak-ng into tempfile.mkdtemp(); on a read-only root with
    no writable /tmp (a locked-down add-on) every burst failed. Use the cache then."""
    import tempfile

    from wyoming_kokoro.catalog.places import cache_dir

    try:
        tempfile.gettempdir()
    except FileNotFoundError:
        fallback = cache_dir() / "tmp"
        try:
            fallback.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        tempfile.tempdir = str(fallback)


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format=line_format("%(levelname)s worker[%(process)d] %(name)s: %(message)s"),
        stream=sys.stderr,
    )
    # Gone with the server, even while hanging in the model load (SIGKILL: nothing to
    # save; a later worker removes the temporary directory).
    die_with_parent(parent_from_env())
    _ensure_tempdir()
    stdin, stdout = _protocol_streams()
    try:
        if "--zygote" in sys.argv[1:]:
            code = wait_and_fork(stdin, stdout)  # each child takes a directory of its own
        else:
            # Left in place on exit (the wrappers' finalizers empty it): its lock goes
            # with the process, and a later worker removes it.
            own_tempdir()
            code = run_loop(stdin, stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        code = 0  # the server went away: nothing left to do
    sys.exit(code)


if __name__ == "__main__":
    main()
