"""The cached optimized copy of the model: written once, loaded fast, never trusted blindly."""

from __future__ import annotations

import logging
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from support.cores import THREADS
from support.privileges import can_mount_privately
from support.session_speech import speak

from wyoming_kokoro.catalog.assets import Assets, model_file, resolve
from wyoming_kokoro.cpus import automatic_threads, cgroup_cpu_quota
from wyoming_kokoro.synthesis.runtime import GRAPH, WEIGHTS, create_session, optimized_copy

DIGESTS = "sha256"  # the copy's files' sha256 (runtime.DIGESTS)


@pytest.fixture(scope="module")
def assets() -> Assets:
    return resolve(None, None, [])


@pytest.fixture(scope="module")
def model(assets: Assets) -> Iterator[str]:
    with model_file(assets) as path:
        yield path


@pytest.fixture(scope="module")
def reference(model: str, assets: Assets) -> np.ndarray:
    """What the .onnx itself says, with no copy involved."""
    return speak(create_session(model, THREADS, None), assets)


@pytest.fixture(scope="module")
def saved(model: str, assets: Assets, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy written by a first load, kept aside for the tests to damage."""
    copy = optimized_copy(assets.model, tmp_path_factory.mktemp("saved"))
    assert copy is not None
    create_session(model, THREADS, copy)
    return copy


@pytest.mark.model
def test_first_load_saves_a_copy_the_next_load_uses(
    saved: Path, model: str, assets: Assets, reference: np.ndarray, caplog
) -> None:
    assert {p.name for p in saved.iterdir()} == {GRAPH, WEIGHTS, DIGESTS}
    assert not [p for p in saved.parent.iterdir() if p.name.startswith(".")]  # no leftovers
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.runtime"):
        session = create_session(model, THREADS, saved)
    assert "Loaded the optimized copy" in caplog.text
    # The copy speaks exactly what the model does, sample for sample.
    assert np.array_equal(speak(session, assets), reference)


def _truncate(copy: Path) -> None:
    with open(copy / WEIGHTS, "r+b") as out:
        out.truncate((copy / WEIGHTS).stat().st_size // 2)


def _garble(copy: Path) -> None:
    (copy / GRAPH).write_bytes(b"not a model" * 100)


def _lose_weights(copy: Path) -> None:
    (copy / WEIGHTS).unlink()


def _lose_graph(copy: Path) -> None:  # e.g. a copy interrupted by a crash
    (copy / GRAPH).unlink()


def _flip(copy: Path) -> None:
    """A few bytes of the weights changed in place: the copy still loads, and speaks
    something else."""
    with open(copy / WEIGHTS, "r+b") as out:
        out.seek((copy / WEIGHTS).stat().st_size // 2)
        data = out.read(16)
        out.seek(-16, os.SEEK_CUR)
        out.write(bytes(b ^ 0x5A for b in data))


def _lose_digests(copy: Path) -> None:  # a copy an older release made
    (copy / DIGESTS).unlink(missing_ok=True)


@pytest.mark.model
@pytest.mark.parametrize(
    "damage", [_truncate, _garble, _lose_weights, _lose_graph, _flip, _lose_digests]
)
def test_a_broken_copy_is_replaced(
    damage: Callable[[Path], None],
    saved: Path,
    model: str,
    assets: Assets,
    reference: np.ndarray,
    tmp_path: Path,
    caplog,
) -> None:
    copy = tmp_path / saved.name
    shutil.copytree(saved, copy)
    damage(copy)
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.runtime"):
        session = create_session(model, THREADS, copy)
    assert np.array_equal(speak(session, assets), reference)
    assert "Saved an optimized copy" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.runtime"):
        create_session(model, THREADS, copy)
    # Loaded next time (a loaded copy speaks as the model does: the test above).
    assert "Loaded the optimized copy" in caplog.text


@pytest.mark.model
def test_saving_removes_copies_for_other_releases_and_cpus(
    model: str, assets: Assets, tmp_path: Path
) -> None:
    copy = optimized_copy(assets.model, tmp_path)
    assert copy is not None
    key = copy.name.split("-ort")[0]
    old_file = tmp_path / f"{key}-ort1.20.0-0123456789.ort"  # the format used before
    old_dir = tmp_path / f"{key}-ort1.31.0-0123456789"
    other_model = tmp_path / "0123456789abcdef-ort1.31.0-0123456789"
    for directory in (old_dir, other_model):
        directory.mkdir()
        (directory / GRAPH).write_bytes(b"x")
    old_file.write_bytes(b"x")
    create_session(model, THREADS, copy)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([copy.name, other_model.name])


@pytest.mark.model
def test_an_unwritable_cache_costs_only_the_copy(
    model: str, assets: Assets, reference: np.ndarray, tmp_path: Path
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_bytes(b"")
    copy = optimized_copy(assets.model, blocker / "cache")  # its parent cannot be made
    session = create_session(model, THREADS, copy)
    assert np.array_equal(speak(session, assets), reference)
    assert blocker.read_bytes() == b""


def test_only_published_models_get_a_copy(tmp_path: Path) -> None:
    assert optimized_copy(tmp_path / "my-finetune.onnx") is None
    assert optimized_copy(tmp_path / "voices-v1.0.bin") is None


# Runs inside a private mount namespace with a 1 MB tmpfs at argv[1]: the copy
# cannot be saved there (ENOSPC), and the session must load all the same.
_ON_A_FULL_DISK = """
import sys
from pathlib import Path
import numpy as np
from wyoming_kokoro.catalog.assets import model_file, resolve
from wyoming_kokoro.synthesis.runtime import create_session, optimized_copy
from support.session_speech import speak
from support.session_speech import PHONEMES
from support.cores import THREADS

full, out = Path(sys.argv[1]), Path(sys.argv[2])
assets = resolve(None, None, [])
with model_file(assets) as model:
    session = create_session(model, THREADS, optimized_copy(assets.model, full))
np.save(out / "audio.npy", speak(session, assets))
(out / "left.txt").write_text("\\n".join(p.name for p in full.iterdir()))
"""


@pytest.mark.model
@pytest.mark.skipif(not can_mount_privately(), reason="needs user+mount namespaces")
@pytest.mark.parametrize(
    "tmpfs",
    [
        "size=1m",  # plainly full: no room for the copy
        "size=512m,nr_inodes=3",  # room in bytes, but no inode for the weights file
    ],
)
def test_a_full_cache_disk_costs_only_the_copy(
    tmpfs: str, reference: np.ndarray, tmp_path: Path
) -> None:
    full, out = tmp_path / "full", tmp_path / "out"
    full.mkdir()
    out.mkdir()
    mount = f'mount -t tmpfs -o {tmpfs} tmpfs "$1" && shift && exec "$@"'
    script = [sys.executable, "-c", _ON_A_FULL_DISK, str(full), str(out)]
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount, "sh", str(full), *script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[1],  # tests/: where `support` is found
    )
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(out / "audio.npy"), reference)
    # Nothing half-written stays behind to fill the disk further or be loaded later.
    assert (out / "left.txt").read_text() == ""


_HEAP_PROBE = """
import ctypes, sys
from wyoming_kokoro.synthesis.runtime import return_freed_memory

def anon_kb():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1])

if sys.argv[1] == "fixed":
    return_freed_memory()
libc = ctypes.CDLL(None)
libc.malloc.restype = libc.memset.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
libc.free(libc.malloc(16 << 20))  # an arena's block, handed back after a run
block = libc.malloc(8 << 20)  # the next run's block
libc.memset(block, 1, 8 << 20)
above = libc.malloc(4096)  # anything allocated after it and still alive
libc.memset(above, 1, 4096)
before = anon_kb()
libc.free(block)
print(before - anon_kb())
"""


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or "MALLOC_MMAP_THRESHOLD_" in os.environ,
    reason="glibc's own mmap threshold, read from /proc",
)
def test_freed_blocks_go_back_to_the_system() -> None:
    """A freed arena block of a few MB leaves the process even with memory above it."""

    def returned_kb(mode: str) -> int:
        probe = [sys.executable, "-c", _HEAP_PROBE, mode]
        return int(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)

    assert returned_kb("fixed") >= 7 << 10
    # glibc's own threshold, raised by the first free, keeps it: what the fix is for.
    assert returned_kb("default") < 1 << 10


# ------------------------------------------------------------ automatic thread count
def _cgroup(tmp_path: Path, files: dict[str, str], proc: str = "0::/\n") -> tuple[Path, Path]:
    """A fake cgroup tree under tmp_path and the /proc/self/cgroup that points into it."""
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    root.mkdir(exist_ok=True)
    proc_cgroup = tmp_path / "proc-self-cgroup"
    proc_cgroup.write_text(proc)
    return root, proc_cgroup


@pytest.mark.parametrize(
    ("files", "proc", "quota"),
    [
        ({}, "0::/\n", None),  # no cgroup files at all (not Linux, or not mounted)
        ({"cpu.max": "max 100000\n"}, "0::/\n", None),  # v2, no limit
        ({"cpu.max": "100000 100000\n"}, "0::/\n", 1.0),  # docker --cpus 1
        ({"cpu.max": "150000 100000\n"}, "0::/\n", 1.5),
        # v2 with the process's own path: the pod's limit above the container's counts
        (
            {"kubepods/pod1/cpu.max": "50000 100000", "kubepods/pod1/ctr/cpu.max": "max 100000"},
            "0::/kubepods/pod1/ctr\n",
            0.5,
        ),
        # v1: quota -1 is no limit
        (
            {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
            "1:cpu:/\n",
            None,
        ),
        (
            {"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"},
            "3:cpu,cpuacct:/\n",
            2.0,
        ),
        # v1 inside a container without a cgroup namespace: /proc names the host's
        # path, the mount shows the container's own cgroup as the root
        (
            {"cpu,cpuacct/cpu.cfs_quota_us": "25000", "cpu,cpuacct/cpu.cfs_period_us": "100000"},
            "3:cpu,cpuacct:/docker/0123abcd\n",
            0.25,
        ),
        ({"cpu.max": "garbage\n"}, "0::/\n", None),  # unreadable: no quota, no crash
    ],
)
def test_the_cgroup_quota_is_read_from_v2_and_v1(
    tmp_path: Path, files: dict[str, str], proc: str, quota: float | None
) -> None:
    root, proc_cgroup = _cgroup(tmp_path, files, proc)
    assert cgroup_cpu_quota(root, proc_cgroup) == quota


@pytest.mark.parametrize(
    ("cpu_max", "affinity", "threads"),
    [
        ("max 100000", 8, 4),  # a big box: capped as before
        ("max 100000", 2, 2),
        ("100000 100000", 8, 1),  # --cpus 1 on an 8-core node
        ("150000 100000", 8, 2),  # a part of a CPU counts as one: rounded up
        ("10000 100000", 8, 1),  # at least 1
        ("400000 100000", 2, 2),  # a quota above the affinity does not add CPUs
    ],
)
def test_automatic_threads_fit_the_quota_and_the_affinity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu_max: str, affinity: int, threads: int
) -> None:
    root, proc_cgroup = _cgroup(tmp_path, {"cpu.max": cpu_max})
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(affinity)))
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert automatic_threads(root, proc_cgroup) == threads


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux)")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to confine to 1")
def test_a_process_confined_by_taskset_gets_one_thread() -> None:
    probe = "from wyoming_kokoro.cpus import automatic_threads as a; print(a())"
    free = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    confined = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
    )
    if int(free.stdout) < 2:
        pytest.skip("a cgroup quota already holds this machine to 1 thread")
    assert int(confined.stdout) == 1
