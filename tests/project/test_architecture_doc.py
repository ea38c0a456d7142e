"""docs/architecture.md lists every module file, and says truly which process runs it.

The module table must name each file under wyoming_kokoro/ and cli/ exactly once,
and nothing that is not there; its process column is checked against what the
server, the worker and kokoro-say import in a fresh interpreter.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PROCESSES = frozenset(
    {"server", "worker", "both", "CLI", "server, CLI", "worker, CLI", "both, CLI"}
)
_ROW = re.compile(r"^\| `([^`]+\.py)` \| ([^|]+?) \| .+\|$", re.M)


def _table() -> list[tuple[str, str]]:
    return _ROW.findall(DOC.read_text(encoding="utf-8"))


def _module_files() -> set[str]:
    files = {*ROOT.glob("wyoming_kokoro/**/*.py"), *ROOT.glob("cli/**/*.py")}
    return {path.relative_to(ROOT).as_posix() for path in files}


def _files_loaded_by(imports: str) -> set[str]:
    """The module files of ours a fresh interpreter holds after `import <imports>`."""
    code = (
        f"import json, sys; import {imports}\n"
        "files = [getattr(m, '__file__', None) for m in list(sys.modules.values())]\n"
        "print(json.dumps([f for f in files if f]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    ours = set()
    for name in json.loads(out.stdout):
        path = Path(name).resolve()
        if path.is_relative_to(ROOT):
            ours.add(path.relative_to(ROOT).as_posix())
    return ours & _module_files()


def test_every_module_file_is_listed_once_and_nothing_else() -> None:
    listed = [path for path, _ in _table()]
    assert len(listed) == len(set(listed)), "a module is listed twice"
    missing = sorted(_module_files() - set(listed))
    stale = sorted(set(listed) - _module_files())
    assert not missing, f"add to docs/architecture.md: {missing}"
    assert not stale, f"no such module any more: {stale}"


# The folders that name a process hold only modules of that process.
FOLDERS = {
    "wyoming_kokoro/server/": {"server"},
    "wyoming_kokoro/worker/": {"worker"},
    "wyoming_kokoro/synthesis/": {"worker, CLI"},
}


def test_the_folders_are_the_processes() -> None:
    wrong = {
        path: process
        for path, process in _table()
        for folder, allowed in FOLDERS.items()
        if path.startswith(folder) and process not in allowed
    }
    assert not wrong, f"a module in the wrong folder for its process: {wrong}"


def test_every_process_is_one_of_the_legend() -> None:
    wrong = {path: process for path, process in _table() if process not in PROCESSES}
    assert not wrong, f"process must be one of {sorted(PROCESSES)}: {wrong}"


@pytest.mark.parametrize(
    ("process", "imports", "marks"),
    [
        # the server's entry point and its HTTP door
        ("server", "wyoming_kokoro.__main__, wyoming_kokoro.server.http", ("server", "both")),
        # what the worker imports as it starts (its entry point, then the engine)
        (
            "worker",
            "wyoming_kokoro.worker.__main__, wyoming_kokoro.synthesis.engine",
            ("worker", "both"),
        ),
        # kokoro-say, with what it imports once its arguments are checked
        ("CLI", "kokoro_say.main, kokoro_say.output, wyoming_kokoro.synthesis.engine", ("CLI",)),
    ],
)
def test_the_process_column_agrees_with_the_imports(
    process: str, imports: str, marks: tuple[str, ...]
) -> None:
    processes = dict(_table())
    wrong = sorted(
        path
        for path in _files_loaded_by(imports)
        if not any(mark in processes.get(path, "") for mark in marks)
    )
    assert not wrong, f"the {process} imports {wrong}; docs/architecture.md says otherwise"
