"""images/, offline: the image tests load and collect on the host.

script/test-images builds the images first and only then runs pytest on images/, so a
change to what images/conftest.py borrows from tests/ would otherwise show only after
the builds, in CI.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_image_tests_collect() -> None:
    # As script/test-images runs them, without building anything.
    args = ["images", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "testpaths=images"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " collected" in done.stdout, done.stdout[-2000:]
    assert "test_images.py::" in done.stdout
