"""How many threads `--threads 0` means: the CPUs this process may really use.

Light on purpose (no numpy, no onnxruntime): the server reads it for its settings,
the worker for its session.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

# At most this many automatic threads: small boxes have 2-4 cores, and on SMT machines
# more logical CPUs than physical cores only add contention.
MAX_AUTOMATIC_THREADS = 4
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def affinity_cpus() -> int:
    """CPUs this process may be scheduled on (taskset, a cpuset cgroup, --cpuset-cpus)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _cgroup_paths(proc_cgroup: Path) -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for v2, a controller name for v1."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in proc_cgroup.read_text().splitlines():
            parts = line.split(":", 2)
            if len(parts) != 3:
                continue
            _, controllers, path = parts
            if not controllers:
                paths[""] = path
            for controller in controllers.split(","):
                if controller in ("cpu", "cpuacct"):
                    paths[controller] = path
    return paths


def _with_ancestors(base: Path, path: str) -> list[Path]:
    """`base`/`path` and each parent up to `base`: a limit set on a parent (a pod
    above its container, a slice above a service) confines the children too."""
    directory = base / path.strip("/") if path.strip("/") else base
    found = [directory]
    while directory != base and base in directory.parents:
        directory = directory.parent
        found.append(directory)
    return found


def _read_v2(directory: Path) -> float | None:
    with contextlib.suppress(OSError, ValueError):
        quota, period = (directory / "cpu.max").read_text().split()[:2]
        if quota != "max" and int(period) > 0:
            return int(quota) / int(period)
    return None


def _read_v1(directory: Path) -> float | None:
    with contextlib.suppress(OSError, ValueError):
        quota = int((directory / "cpu.cfs_quota_us").read_text())
        period = int((directory / "cpu.cfs_period_us").read_text())
        if quota > 0 and period > 0:  # -1: no quota
            return quota / period
    return None


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs' worth of time the cgroup quota allows (docker --cpus, a Kubernetes CPU
    limit), the smallest along the way up; None when there is no quota.

    cgroup v2 keeps it in cpu.max ("QUOTA PERIOD" or "max PERIOD"), v1 in
    cpu.cfs_quota_us / cpu.cfs_period_us. Inside a container the cgroup is usually
    mounted as the root itself: walking up from the process's path reaches it.
    """
    paths = _cgroup_paths(proc_cgroup)
    quotas: list[float] = []
    for directory in _with_ancestors(root, paths.get("", "/")):
        quotas += filter(None, [_read_v2(directory)])
    for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        for directory in _with_ancestors(root / mount, paths.get("cpu", "/")):
            quotas += filter(None, [_read_v1(directory)])
    return min(quotas) if quotas else None


def automatic_threads(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The thread count for `--threads 0`: the CPUs this process may really use.

    os.cpu_count() counts the machine's CPUs, not the ones granted: a container held
    to one CPU's quota on an 8-core node would run 4 threads on that quota and be
    throttled. So: the CPUs of its affinity, no more than the quota rounded up, at
    least 1, at most MAX_AUTOMATIC_THREADS.
    """
    cpus = affinity_cpus()
    quota = cgroup_cpu_quota(root, proc_cgroup)
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    threads = max(1, min(MAX_AUTOMATIC_THREADS, cpus))
    # Said at INFO only when the box is smaller than the machine: the surprising case.
    confined = cpus < min(MAX_AUTOMATIC_THREADS, os.cpu_count() or 1)
    _LOGGER.log(
        logging.INFO if confined else logging.DEBUG,
        "Automatic threads: %d (%d of %d CPUs in this process's affinity, cgroup quota %s)",
        threads,
        affinity_cpus(),
        os.cpu_count() or 1,
        "none" if quota is None else f"{quota:g} CPUs",
    )
    return threads
