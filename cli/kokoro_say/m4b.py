"""An audiobook file: AAC in MP4 (`.m4b`, or `.m4a`) with a chapter mark per chapter,
the book's title and author in its tags and its cover as an attached picture.

PyAV (FFmpeg's MP4 muxer) writes all of it: the marks as both a chapter track and
Nero `chpl` (what FFmpeg, Apple's and most Android players read), the tags as iTunes
atoms, the cover as `covr`. Written to a hidden file beside the output and renamed
when complete, as every kokoro-say output is.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wyoming_kokoro.audio import SAMPLE_RATE

from . import partial
from .book import Cover
from .output import failed

if TYPE_CHECKING:
    from av.audio.stream import AudioStream
    from av.container import OutputContainer
    from av.container.core import Chapter
    from av.stream import Stream

_LOGGER = logging.getLogger("kokoro_say")

EXTENSIONS = (".m4b", ".m4a")
# Speech in mono: 64 kb/s AAC is transparent for a voice and keeps a book small.
BIT_RATE = 64_000
_COVER_CODECS = {"image/jpeg": "mjpeg", "image/png": "png"}
_MAX_SIDE = 0xFFFF


@dataclass(frozen=True)
class Mark:
    title: str
    start: int  # in samples


@dataclass(frozen=True)
class Tags:
    title: str | None
    author: str | None
    cover: Cover | None


def write(
    path: str, audio: Iterable[np.ndarray], samples: int, marks: list[Mark], tags: Tags
) -> None:
    """Encode `audio` (int16 blocks, `samples` in all) into `path` with `marks` and `tags`."""
    import av

    final = os.path.realpath(path)
    if os.path.isdir(final):
        raise OSError(f"cannot write {path}: it is a directory")
    if not os.path.isdir(os.path.dirname(final)):
        raise OSError(
            f"cannot write {path}: directory {os.path.dirname(path) or '.'} does not exist"
        )
    try:
        fd, tmp = partial.make(final)
    except OSError as err:
        raise failed(path, err) from err
    os.close(fd)
    brand = "M4B " if final.lower().endswith(".m4b") else "M4A "
    try:
        # faststart: the index before the audio, so a player starts without reading it all.
        with av.open(
            tmp, "w", format="mp4", options={"brand": brand, "movflags": "+faststart"}
        ) as out:
            _tag(out, tags)
            stream = out.add_stream("aac", rate=SAMPLE_RATE, layout="mono")
            stream.bit_rate = BIT_RATE
            picture = _cover_stream(out, tags.cover)
            # Before the first packet: the muxer decides on its chapter track then.
            out.set_chapters(_chapters(marks, samples))
            if picture is not None and tags.cover is not None:
                packet = av.Packet(tags.cover.data)
                packet.stream = picture
                packet.pts = packet.dts = 0
                out.mux(packet)
            at = 0
            for block in audio:
                at = _encode(out, stream, block, at)
            for packet in stream.encode(None):
                out.mux(packet)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, final)
    except av.FFmpegError as err:
        raise OSError(f"cannot write {path}: {err.strerror or err}") from err
    except OSError as err:
        raise failed(path, err) from err
    finally:
        Path(tmp).unlink(missing_ok=True)


def _encode(out: OutputContainer, stream: AudioStream, block: np.ndarray, pts: int) -> int:
    import av

    if not len(block):
        return pts
    frame = av.AudioFrame.from_ndarray(
        np.ascontiguousarray(block, dtype=np.int16)[None, :], format="s16", layout="mono"
    )
    frame.sample_rate = SAMPLE_RATE
    frame.pts = pts
    for packet in stream.encode(frame):
        out.mux(packet)
    return pts + len(block)


def _chapters(marks: list[Mark], samples: int) -> list[Chapter]:
    base = Fraction(1, SAMPLE_RATE)
    chapters: list[Chapter] = []
    for number, mark in enumerate(marks):
        end = marks[number + 1].start if number + 1 < len(marks) else samples
        chapters.append(
            {
                "id": number + 1,
                "start": mark.start,
                "end": max(end, mark.start),
                "time_base": base,
                "metadata": {"title": mark.title},
            }
        )
    return chapters


def _tag(out: OutputContainer, tags: Tags) -> None:
    metadata = out.metadata
    if tags.title:
        metadata["title"] = tags.title
        metadata["album"] = tags.title  # players list audiobooks by album
    if tags.author:
        metadata["artist"] = tags.author
        metadata["album_artist"] = tags.author
    metadata["genre"] = "Audiobook"


def _cover_stream(out: OutputContainer, cover: Cover | None) -> Stream | None:
    if cover is None or cover.mime not in _COVER_CODECS:
        return None
    import av

    size = picture_size(cover)
    if size is None:
        _LOGGER.warning("The cover is not a picture that can be read: left out")
        return None
    width, height = size
    # MP4 keeps a picture's sides in 16 bits: a larger claim (a damaged or hostile
    # header) would fail the whole file once the book is spoken.
    if width > _MAX_SIDE or height > _MAX_SIDE:
        _LOGGER.warning("The cover is larger than an M4B can hold (%dx%d): left out", width, height)
        return None
    # The muxer refuses a picture stream without its size.
    stream = out.add_mux_stream(_COVER_CODECS[cover.mime], width=width, height=height)
    stream.disposition = av.stream.Disposition.attached_pic
    return stream


def picture_size(cover: Cover) -> tuple[int, int] | None:
    """A PNG's or a JPEG's width and height, from its header (None if it has none)."""
    data = cover.data
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return (width, height) if width and height else None
    at = 2 if data.startswith(b"\xff\xd8") else len(data)
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        # Start of frame (baseline, progressive, …); not DHT, JPG or DAC.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return (width, height) if width and height else None
        at += 2 + length
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
