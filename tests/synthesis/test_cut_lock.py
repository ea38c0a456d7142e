"""Two servers started on one empty cache cut the model once: the cut holds a lock
in the cache (flock: released by the kernel if its holder dies), the other process
waits for it and uses its parts; the voice teachers likewise. Real processes."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from support.run_cache import unlearned

from wyoming_kokoro.catalog.assets import embedded_voices
from wyoming_kokoro.catalog.cut import VERIFIED, cut_dir
from wyoming_kokoro.catalog.files import MODEL_FILES

pytestmark = pytest.mark.model

CUT = "Cut the model for decoding in windows"


@pytest.mark.timeout(300, func_only=True)
def test_a_cut_started_while_another_holds_the_lock_waits_and_cuts_nothing(
    tmp_path: Path,
) -> None:
    """A second cut on one cache waits for the first's lock and uses its parts. The
    first cut is played by the test: it holds the lock, then puts the run's own cut in
    place (a real second cut would cost a minute of CPU and show nothing more)."""
    source = Path(os.environ["KOKORO_CACHE_DIR"])
    model = source / MODEL_FILES["int8"].name
    voices = embedded_voices()
    made = cut_dir(model, source)
    assert model.is_file() and voices is not None and made is not None
    assert (made / VERIFIED).is_file(), "the run's cache has no cut model"
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cut_dir(model, cache)
    assert target is not None
    env = {**os.environ, "KOKORO_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "wyoming_kokoro.synthesis.cutting", str(model), str(voices)]
    with target.with_name(f"{target.name}.cut.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cutting = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
        assert cutting.stderr is not None
        said: list[str] = []
        for line in cutting.stderr:
            said.append(line)
            if "holds the model's cut lock" in line:
                break
        else:
            pytest.fail("".join(said))
        assert not list(cache.glob(".*.part")), said  # nothing cut beside the holder
        target.mkdir()
        for part in made.iterdir():
            (target / part.name).symlink_to(part.resolve())
        fcntl.flock(lock, fcntl.LOCK_UN)
    rest = cutting.communicate(timeout=240)[1]
    log = "".join(said) + rest
    assert cutting.returncode == 0, log
    assert CUT not in log and "Another process cut the model" in log, log


# Another server's teacher, as far as the lock goes: the lock file beside the entry.
_HOLD = """
import fcntl, sys, time
with open(sys.argv[1] + ".teach.lock", "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(600)
"""


def _lines(stream: IO[str], into: list[str]) -> None:
    for line in stream:
        into.append(line)


def test_a_second_teacher_waits_for_the_first(tmp_path: Path) -> None:
    """Two servers on one cache would teach the same voices at once: the second
    teacher waits, and goes on once the first is gone (even killed)."""
    cache = unlearned(tmp_path / "cache")  # the run's cut, linked; nothing taught
    model, voices = cache / MODEL_FILES["int8"].name, embedded_voices()
    entry = cut_dir(model, cache)
    assert entry is not None and (entry / VERIFIED).is_file() and voices is not None
    env = {**os.environ, "KOKORO_CACHE_DIR": str(cache)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(entry)], env=env, stdout=subprocess.PIPE, text=True
    )
    teacher = None
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        teacher = subprocess.Popen(
            [sys.executable, "-m", "wyoming_kokoro.synthesis.teaching", str(model), str(voices)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        log: list[str] = []
        assert teacher.stderr is not None
        threading.Thread(target=_lines, args=(teacher.stderr, log), daemon=True).start()
        waiting = _until(lambda: any("teach lock: waiting" in line for line in log), 120)
        assert waiting and teacher.poll() is None, log
        assert not any("Model loaded" in line for line in log), log
        holder.kill()  # the kernel releases its lock
        assert _until(lambda: any("Model loaded" in line for line in log), 300), log
        # Minutes of teaching say how far they are: the voice, and how many are left.
        counted = re.compile(r"Teaching voice (\S+) \(1 of (\d+)\)")
        assert _until(lambda: any(counted.search(line) for line in log), 300), log
        [total] = [m[2] for line in log if (m := counted.search(line))]
        assert int(total) == len(_voice_names(voices)), log
    finally:
        for process in (holder, teacher):
            if process is not None:
                process.kill()
                process.wait()


def _voice_names(voices: Path) -> list[str]:
    import numpy as np

    with np.load(voices) as pack:
        return list(pack.files)


def _until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
