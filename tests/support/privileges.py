"""What this machine lets a test do."""

from __future__ import annotations

import subprocess


def can_mount_privately() -> bool:
    """Can tests mount (tmpfs, read-only binds) in a user+mount namespace of their own?"""
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0
    except OSError:
        return False
