"""Two servers started on one empty cache cut the model once: the cut holds a lock
in the cache (flock: released by the kernel if its holder dies), the other process
waits for it and uses its parts. Real processes, a real cut."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
