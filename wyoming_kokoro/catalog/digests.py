"""The sha256 of each file a cache entry holds, written into a mark beside them when
the entry is made and checked before the files are used.

A few flipped bytes in a cached model part still load, and then speak silence or
noise for good. The mark lists each file's sha256 and size under a free header
(`<sha256> <size> <name>` per line); it is written aside and renamed, so a reader
sees the whole list or none. Light: hashlib only, so the server may import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

_LINE = re.compile(r"([0-9a-f]{64}) (\d+) (\S+)")


def sha256_of(path: Path) -> str:
    """The file's sha256 (hashlib lets other threads run while it hashes)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write(directory: Path, names: Iterable[str], mark: Path, header: str = "") -> None:
    """Hash `names` in `directory` and write `mark`: `header`, then one line per file."""
    lines = [header.rstrip("\n")] if header else []
    for name in names:
        path = directory / name
        lines.append(f"{sha256_of(path)} {path.stat().st_size} {name}")
    tmp = mark.with_name(f".{mark.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, mark)  # atomic: the whole list or none
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def recorded(mark: Path) -> dict[str, tuple[str, int]] | None:
    """Each file's (sha256, size) the mark lists; None when it lists none (a mark
    from before digests were kept) or cannot be read."""
    try:
        text = mark.read_text(errors="replace")
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        match = _LINE.fullmatch(line.strip())
        if match:
            found[match[3]] = (match[1], int(match[2]))
    return found or None


def mismatch(directory: Path, digests: dict[str, tuple[str, int]], name: str) -> bool:
    """Whether `name` in `directory` differs from what `digests` say (or is unlisted,
    missing or unreadable): its size first, then its sha256."""
    expected = digests.get(name)
    if expected is None:
        return True
    path = directory / name
    try:
        return path.stat().st_size != expected[1] or sha256_of(path) != expected[0]
    except OSError:
        return True
