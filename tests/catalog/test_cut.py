"""The cut model's cache entry: the server and the worker must name it alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The entry's name, as the server gives it and (after importing onnxruntime) the worker.
_NAMES = """
import sys
from pathlib import Path
from wyoming_kokoro.catalog.cut import cut_dir
model = Path("kokoro-v1.0.int8.onnx")
before = cut_dir(model).name
assert "onnxruntime" not in sys.modules, "the server's side imported onnxruntime"
if sys.argv[1] == "import":
    import onnxruntime
print(before, cut_dir(model).name if sys.argv[1] == "import" else "")
"""


def _names(mode: str, path: Path | None = None) -> list[str]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-c", _NAMES, mode], capture_output=True, text=True, check=True, env=env
    )
    return run.stdout.split()


def test_the_server_names_the_entry_as_the_worker_does() -> None:
    """Without importing onnxruntime, the version its module reports once imported."""
    server, worker = _names("import")
    assert server == worker


def test_a_build_installed_over_another_is_named_by_its_own_version(tmp_path: Path) -> None:
    """The module's build info counts, not the metadata of the package named onnxruntime
    (which an installed build of another name, or the one before it, would give)."""
    package = tmp_path / "onnxruntime"
    (package / "capi").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('never imported by the server')\n")
    (package / "capi" / "build_and_package_info.py").write_text(
        "package_name = 'onnxruntime-openvino'\n__version__ = '9.8.7'\n"
    )
    [name] = _names("server", tmp_path)
    assert name.endswith("-ort9.8.7")


_HOLD = """
import sys, time
from pathlib import Path
from wyoming_kokoro.catalog.cut import locked
with locked(Path(sys.argv[1]), "cut"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_cut_lock_whose_holder_was_killed_is_taken_at_once(tmp_path: Path) -> None:
    """flock: the kernel releases the lock of a process that died (no stale lock file)."""
    import fcntl
    import signal

    from wyoming_kokoro.catalog.cut import locked

    entry = tmp_path / "split4-entry"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(entry)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with open(entry.with_name(f"{entry.name}.cut.lock"), "a") as lock:
            try:  # held by the other process now
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                taken = True
            except BlockingIOError:
                taken = False
        assert not taken
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with locked(entry, "cut"):  # would wait for good if the dead holder still held it
        pass
