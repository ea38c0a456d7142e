"""A cache directory of the test run's own, so tests teach nothing to the user's.

The server learns as it speaks: each voice's statistics for windows (the cut model's
`priors/`) and each voice's loudness (`loudness.json`) are kept in the cache. Servers,
workers and kokoro-say started by the tests would otherwise learn from test sentences
in the user's cache, and the next run would start from what this one taught. The run's
cache links the model and its cut parts from the user's cache (nothing is copied or
built again) and holds nothing learned.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ENV = "KOKORO_CACHE_DIR"
NO_TEACHING = "KOKORO_NO_TEACHING"
_LEARNED = {"priors", "loudness.json"}
_OWNED = "KOKORO_TEST_CACHE"  # set where the run's cache was made, so it is made once


def use_run_cache() -> Path | None:
    """Point this process and those it starts at a cache of the run's own (made once
    per run: test processes started by xdist inherit it); the directory to remove at
    the end of the run, or None when this process did not make it."""
    if os.environ.get(_OWNED):
        return None
    from wyoming_kokoro.catalog.places import cache_dir

    run = Path(tempfile.mkdtemp(prefix="kokoro-test-cache-"))
    linked(cache_dir(), run)
    os.environ[ENV] = str(run)
    os.environ[_OWNED] = "1"
    # No voice teacher beside the servers the tests start: it would teach the run's
    # cache while tests run, and a test's sound would depend on when it ran.
    # tests/server/test_teacher.py turns it on for its own server.
    os.environ[NO_TEACHING] = "1"
    return run


def linked(source: Path, target: Path) -> Path:
    """`target` made a cache like `source` that holds nothing learned: the model and
    the cut model's parts linked, not copied; `target`."""
    target.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        for entry in source.iterdir():
            if entry.name in _LEARNED:
                continue
            if entry.is_dir() and entry.name.startswith("split"):
                # The cut model's entry: its parts linked, what it learned left out.
                (target / entry.name).mkdir()
                for part in entry.iterdir():
                    if part.name not in _LEARNED:
                        (target / entry.name / part.name).symlink_to(part.resolve())
            else:
                (target / entry.name).symlink_to(entry.resolve())
    return target


def unlearned(target: Path) -> Path:
    """`target` made a cache like the run's, with nothing learned: a server there
    finds the cut model (it is not cut again beside the test) and knows no voice."""
    return linked(Path(os.environ[ENV]), target)


@contextlib.contextmanager
def playing_the_cut(entry: Path, run: Path | None = None) -> Iterator[Callable[[], None]]:
    """The test plays another process's cut of the cache entry `entry`: it holds the
    cut's lock (a cut a server starts meanwhile waits for it) and, when called, puts
    the run's own cut in place, linked, as that cut's end would; the lock is released
    on leaving. The waiting cut then finds the model cut and makes none. A real cut is
    a minute of CPU: script/test makes the run's, kokoro-say's fresh-install test one."""
    source = (run or Path(os.environ[ENV])) / entry.name  # `run`: the run's cache
    assert (source / "verified").is_file(), "the run's cache has no cut model"
    entry.parent.mkdir(parents=True, exist_ok=True)

    def place() -> None:
        entry.mkdir(exist_ok=True)
        for part in source.iterdir():
            if part.name not in _LEARNED:
                (entry / part.name).symlink_to(part.resolve())

    with entry.with_name(f"{entry.name}.cut.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield place


def shared(name: str, make: Callable[[Path], Path]) -> Path:
    """`make(directory)` run once per test run, whichever test process asks first
    (xdist's processes share the run's cache); the others wait and take its result."""
    run = Path(os.environ[ENV])
    directory = run.with_name(f"{run.name}-{name}")
    done = directory / ".made"
    with open(run.with_name(f"{run.name}-{name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            shutil.rmtree(directory, ignore_errors=True)  # a half-made one, if any
            make(directory)
            directory.mkdir(parents=True, exist_ok=True)
            done.touch()
    return directory


def remove(run: Path) -> None:
    """The run's cache and what `shared` made beside it."""
    for path in run.parent.glob(f"{run.name}-*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    shutil.rmtree(run, ignore_errors=True)
