"""The process boundary, pinned statically: the server side loads no model code.

The server stays at about 29 MB while idle because it never imports numpy,
onnxruntime or the synthesis modules; the worker process does. Each import is
checked in a fresh interpreter (sys.modules after it), since one test process
has long since imported everything. The last test shows the check failing when a
server module is made to import numpy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Imported by the server process: its entry point, both doors, the scheduler.
SERVER_MODULES = (
    "wyoming_kokoro.__main__",
    "wyoming_kokoro.server.startup",
    "wyoming_kokoro.server.wyoming.handler",
    "wyoming_kokoro.server.http",
    "wyoming_kokoro.server.scheduler",
    "wyoming_kokoro.server.utterance",
    "wyoming_kokoro.server.rescan",
    "wyoming_kokoro.server.discovery",
    "wyoming_kokoro.healthcheck",
)
# What only the worker may load: the model's libraries, and the synthesis and worker
# packages (the model cut runs in a process of its own, synthesis/cutting.py).
HEAVY_LIBRARIES = ("numpy", "onnxruntime", "onnx", "kokoro_onnx", "misaki", "soundfile")
HEAVY_PACKAGES = ("wyoming_kokoro.synthesis", "wyoming_kokoro.worker")


def _loaded(module: str, pythonpath: Path | None = None) -> set[str]:
    """The modules a fresh interpreter holds after importing `module`."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=pythonpath or ROOT,
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout))


def _heavy(loaded: set[str]) -> list[str]:
    libraries = {name.split(".")[0] for name in loaded} & set(HEAVY_LIBRARIES)
    ours = {name for name in loaded if name.startswith(HEAVY_PACKAGES)}
    return sorted(libraries | ours)


@pytest.mark.parametrize("module", SERVER_MODULES)
def test_the_server_side_loads_no_model_code(module: str) -> None:
    assert _heavy(_loaded(module)) == [], f"{module} pulls in model code"


def test_the_check_fails_when_a_server_module_imports_numpy(tmp_path: Path) -> None:
    # A copy of the package in which text/sentence_ends.py (the handler imports it) gained
    # `import numpy`; PYTHONPATH puts the copy before the installed one.
    shutil.copytree(
        ROOT / "wyoming_kokoro", tmp_path / "wyoming_kokoro", ignore=shutil.ignore_patterns("*.pyc")
    )
    text = tmp_path / "wyoming_kokoro" / "text" / "sentence_ends.py"
    source = text.read_text(encoding="utf-8")
    text.write_text(source.replace("import pysbd\n", "import numpy\nimport pysbd\n", 1))
    loaded = _loaded("wyoming_kokoro.server.wyoming.handler", pythonpath=tmp_path)
    assert "numpy" in _heavy(loaded)
    # ...and the copy was what ran, not the installed package.
    probe = "import wyoming_kokoro.text.sentence_ends as t; print(t.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        cwd=tmp_path,
        check=True,
    )
    assert where.stdout.strip().startswith(str(tmp_path))
