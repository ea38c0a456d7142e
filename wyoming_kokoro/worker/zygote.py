"""The waiting parent of `--prefork`: the heavy imports done once, one forked worker
per burst, each child's exit reported to the server as an `Exited` message."""

from __future__ import annotations

import os
from typing import BinaryIO

from wyoming_kokoro.lifeline import die_with_parent
from wyoming_kokoro.protocol import Exited, Setup, decode
from wyoming_kokoro.worker.loop import run_loop
from wyoming_kokoro.worker.scratch import own_tempdir


def wait_and_fork(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """The waiting parent of --prefork: imports done, one forked worker per burst.

    The scheduler writes nothing after a Setup until Ready comes back, so the
    buffered reader holds no bytes of the next burst when the child takes over.
    """
    import numpy  # noqa: F401  (the imports are the point of waiting)
    import onnxruntime  # noqa: F401
    from wyoming.event import read_event, write_event

    from wyoming_kokoro.synthesis import engine, loading, runtime  # noqa: F401

    while (event := read_event(stdin)) is not None:
        setup = decode(event)
        if not isinstance(setup, Setup):
            continue  # a Stop for a worker that is already gone
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            code, scratch = 1, None
            try:
                # Gone with the waiting parent, which goes with the server.
                die_with_parent(parent)
                scratch = own_tempdir()  # never raises: the finally must be reached
                code = run_loop(stdin, stdout, setup)
            except BrokenPipeError:
                code = 0
            finally:
                stdout.flush()
                if scratch is not None:  # os._exit finalizes nothing: the copies would stay
                    scratch.discard()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        write_event(Exited(pid, os.waitstatus_to_exitcode(status)).event(), stdout)
        stdout.flush()
    return 0
