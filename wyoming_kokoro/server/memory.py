"""Memory facts from /proc (Linux); None where they cannot be read."""

from __future__ import annotations

from pathlib import Path


def available_mb() -> int | None:
    """MemAvailable: what can be allocated without swapping, in MB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident set size of a process in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
