"""Process facts from /proc: trees, RSS by role, CPU used by others, the machine."""

from __future__ import annotations

import os
import platform
from importlib.metadata import version
from pathlib import Path

from wyoming_kokoro.server.memory import rss_mb

_TICK = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """Direct children of pid (the server's worker is one)."""
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def tree(pid: int) -> list[int]:
    """pid and all of its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children(current)
    return found


def role(pid: int, root: int) -> str:
    """What a process in a scenario's tree is: scenario, server or worker."""
    if pid == root:
        return "scenario"
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    if b"wyoming_kokoro.worker" in args:
        return "worker"
    if b"wyoming_kokoro" in args:
        return "server"
    return "other"


def rss_by_role(root: int, roles: dict[int, str]) -> dict[str, float]:
    """Summed RSS (MB) of the tree per role; `roles` caches what each pid is."""
    totals: dict[str, float] = {}
    for pid in tree(root):
        rss = rss_mb(pid)
        if rss is None:
            continue
        name = roles.setdefault(pid, role(pid, root))
        totals[name] = totals.get(name, 0.0) + rss
    totals["total"] = sum(totals.values())
    return totals


def cpu_ticks() -> dict[int, int]:
    """CPU time (user + system, clock ticks) of every process now running."""
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks


def cpu_used(before: dict[int, int], after: dict[int, int], skip: set[int]) -> float:
    """CPU seconds used between two snapshots by processes not in `skip`."""
    used = sum(t - before.get(pid, 0) for pid, t in after.items() if pid not in skip)
    return used / _TICK


def machine() -> dict[str, str | int]:
    """What the numbers were measured on."""
    from wyoming_kokoro.cpus import automatic_threads

    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {
        "cpu": model,
        "cores": os.cpu_count() or 0,
        "onnxruntime": version("onnxruntime"),
        "kokoro_onnx": version("kokoro-onnx"),
        "python": platform.python_version(),
        "threads": automatic_threads(),
    }


def mark(name: str) -> None:
    """Tell the parent (reading our stdout) that a phase starts now."""
    print(f"MARK {name}", flush=True)
