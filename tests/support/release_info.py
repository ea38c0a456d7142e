"""The release workflow's own script (.github/release_info.py), loaded as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_release_info() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_info", ROOT / ".github/release_info.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release_info = load_release_info()
