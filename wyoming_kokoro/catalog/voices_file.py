"""A voices file (an npz archive of numpy arrays) read and checked without numpy: which
of its members are Kokoro voices, and what is wrong with the others.

The server lists the voices of every data dir with it, so a hostile or damaged file
must cost little to refuse and must never run code (no pickles).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from wyoming_kokoro.catalog.voices import VOICE_NAME

# What a Kokoro v1.0 voice is: one style vector per phoneme count, float32.
VOICE_SHAPE = (510, 1, 256)
VOICE_DTYPE = "<f4"
_VOICE_DATA_BYTES = 4 * 510 * 256
# Bounds that keep a hostile file cheap to refuse: the published pack is 28 MB
# with 54 voices; zipfile would otherwise parse any central directory it is given.
MAX_VOICES_FILE_BYTES = 256 * 1024 * 1024
MAX_VOICES_PER_FILE = 1000
_MAX_NPY_HEADER = 4096


class VoicesFileError(ValueError):
    """A voices file that cannot be read at all."""


@dataclass(frozen=True)
class VoicesFile:
    """The voices in one file that were checked, and what was wrong with the others."""

    path: Path
    members: dict[str, str]  # voice name -> archive member, readable voices only
    problems: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return sorted(self.members)


def _zip_entries(path: Path, size: int) -> int:
    """The entry count the end record claims, read before zipfile parses anything."""
    with path.open("rb") as handle:
        tail_len = min(size, 65536 + 22)
        handle.seek(size - tail_len)
        tail = handle.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        raise VoicesFileError("not a voices file (no zip end record)")
    return int.from_bytes(tail[at + 10 : at + 12], "little")


def _npy_problem(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why a member is not a float32 voice of VOICE_SHAPE, or None when it is one."""
    import ast

    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return "compressed in a way numpy does not read"
    if info.file_size > _VOICE_DATA_BYTES + _MAX_NPY_HEADER + 16:
        return "too large for a voice"
    with archive.open(info) as member:
        head = member.read(12)
        if head[:6] != b"\x93NUMPY" or head[6:7] not in (b"\x01", b"\x02", b"\x03"):
            return "not a numpy array"
        short = head[6] == 1
        length = int.from_bytes(head[8:10] if short else head[8:12], "little")
        start = 10 if short else 12
        if length > _MAX_NPY_HEADER:
            return "not a numpy array"
        header = (head[start:] + member.read(length - (len(head) - start))).decode("latin-1")
        try:
            fields = ast.literal_eval(header)  # a literal only: nothing is called
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return "not a numpy array"
        if not isinstance(fields, dict):
            return "not a numpy array"
        if fields.get("descr") != VOICE_DTYPE or fields.get("fortran_order") is not False:
            return f"holds {fields.get('descr')!r} data, not float32 (pickled objects?)"
        if fields.get("shape") != VOICE_SHAPE:
            return f"has shape {fields.get('shape')}, not {VOICE_SHAPE}"
        if info.file_size != start + length + _VOICE_DATA_BYTES:
            return "truncated or padded"
        # Read to the end: zipfile checks the CRC there, so damaged data shows now.
        data = member.read(_VOICE_DATA_BYTES + 1)
        if member.read(1) or len(data) != _VOICE_DATA_BYTES:
            return "truncated or padded"
    if _non_finite(data):
        return "holds NaN or infinite values"
    return None


# A little-endian float32 is NaN or infinite when its eight exponent bits are all
# ones: the top byte's low seven bits and the byte before's top bit.
_HIGH_EXPONENT = bytes(1 if b & 0x7F == 0x7F else 0 for b in range(256))
_LOW_EXPONENT = bytes(1 if b & 0x80 else 0 for b in range(256))


def _non_finite(data: bytes) -> bool:
    """Whether float32 `data` (little-endian) holds a NaN or an infinity, without numpy."""
    high = int.from_bytes(data[3::4].translate(_HIGH_EXPONENT), "little")
    low = int.from_bytes(data[2::4].translate(_LOW_EXPONENT), "little")
    return high & low != 0


def read_voices_file(path: Path) -> VoicesFile:
    """The checked voices of an npz archive, without loading numpy.

    VoicesFileError if the file cannot be read at all; a voice inside it that is not
    a float32 array of VOICE_SHAPE (a pickle, another shape, damaged data, NaN or
    infinite values) is left out and named in `problems`.
    """
    try:
        if not path.is_file():
            raise VoicesFileError("not a regular file")
        size = path.stat().st_size
        if size > MAX_VOICES_FILE_BYTES:
            raise VoicesFileError(f"larger than {MAX_VOICES_FILE_BYTES} bytes")
        if _zip_entries(path, size) > MAX_VOICES_PER_FILE:
            raise VoicesFileError(f"more than {MAX_VOICES_PER_FILE} entries")
        members: dict[str, str] = {}
        problems: list[str] = []
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else ""
                if not VOICE_NAME.fullmatch(name):
                    problems.append(f"{info.filename[:80]!r}: not a voice name")
                    continue
                try:
                    problem = _npy_problem(archive, info)
                except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as err:
                    problem = f"unreadable ({err})"
                if problem is None and name in members:
                    problem = "in the file twice"
                if problem is None:
                    members[name] = info.filename
                else:
                    problems.append(f"{name}: {problem}")
    except VoicesFileError:
        raise
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as err:
        raise VoicesFileError(f"unreadable ({err})") from None
    return VoicesFile(path, members, tuple(problems))


def voices_in_file(path: Path) -> list[str]:
    """Voice names inside a voices file (an npz archive) without loading numpy."""
    try:
        return read_voices_file(path).names
    except VoicesFileError:
        return []
