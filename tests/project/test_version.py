"""The version is written once, in pyproject.toml, and read from the package's metadata."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import wyoming_kokoro

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_pyprojects() -> None:
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[project]", 1)[1]
    written = re.findall(r'^version\s*=\s*"([^"]+)"', project, re.M)[0]
    assert wyoming_kokoro.__version__ == written
    init = (ROOT / "wyoming_kokoro" / "__init__.py").read_text(encoding="utf-8")
    assert written not in init, "the version is written in pyproject.toml only"


def test_version_is_read_only_when_asked() -> None:
    # A cold worker imports the package before its model load: no importlib.metadata there.
    code = (
        "import sys, wyoming_kokoro.protocol; assert 'importlib.metadata' not in sys.modules;"
        "from wyoming_kokoro import __version__; print(__version__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == wyoming_kokoro.__version__
