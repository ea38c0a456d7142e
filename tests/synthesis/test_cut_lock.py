"""Two servers started on one empty cache cut the model once: the cut holds a lock
in the cache (flock: released by the kernel if its holder dies), the other process
waits for it and uses its parts; the voice teachers likewise. Real processes, a real
cut."""

from __future__ import annotations

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


@pytest.mark.timeout(900, func_only=True)  # a cut is a minute of CPU or more under load
def test_two_cuts_started_on_one_empty_cache_cut_the_model_once(tmp_path: Path) -> None:
    model = Path(os.environ["KOKORO_CACHE_DIR"]) / MODEL_FILES["int8"].name
    voices = embedded_voices()
    assert model.is_file() and voices is not None
    cache = tmp_path / "cache"
    env = {**os.environ, "KOKORO_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "wyoming_kokoro.synthesis.cutting", str(model), str(voices)]
    cuts = [subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    logs = [process.communicate(timeout=900)[1] for process in cuts]
    assert [process.returncode for process in cuts] == [0, 0], logs
    assert sum(log.count(CUT) for log in logs) == 1, logs
    entry = cut_dir(model, cache)
    assert entry is not None and (entry / VERIFIED).is_file()
    # The other one waited, and found the model cut.
    assert any("Another process cut the model" in log for log in logs), logs


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
