"""The audiobook file, without the model: chapter marks, tags and cover as FFmpeg's
libavformat reads them (what ffprobe reports) and as mutagen reads them (the tag
library of many players and taggers)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import av
import mutagen.mp4
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kokoro_say import m4b
from kokoro_say.book import Cover


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    rows = b"".join(b"\x00" + b"\xc0\x30\x30" * 4 for _ in range(3))
    header = struct.pack(">IIBBBBB", 4, 3, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * 24000)) / 24000
    return (np.sin(2 * np.pi * 220 * t) * 6000).astype(np.int16)


def test_marks_tags_and_cover_read_back_by_ffmpeg_and_mutagen(tmp_path: Path) -> None:
    out = tmp_path / "book.m4b"
    blocks = [_tone(1.0), _tone(0.5), _tone(2.0)]
    total = sum(len(b) for b in blocks)
    marks = [m4b.Mark("Opening", 0), m4b.Mark("Zwei – Ä", 24000), m4b.Mark("三", 36000)]
    cover = Cover(_png(), "image/png")
    m4b.write(str(out), iter(blocks), total, marks, m4b.Tags("A Book", "An Author", cover))
    assert [p.name for p in tmp_path.iterdir()] == ["book.m4b"]  # no partial file left

    with av.open(str(out)) as container:
        chapters = container.chapters()
        assert [c["metadata"]["title"] for c in chapters] == ["Opening", "Zwei – Ä", "三"]
        starts = [float(c["start"] * c["time_base"]) for c in chapters]
        assert starts == pytest.approx([0.0, 1.0, 1.5], abs=0.002)
        assert float(chapters[-1]["end"] * chapters[-1]["time_base"]) == pytest.approx(
            3.5, abs=0.01
        )
        assert container.metadata["title"] == "A Book"
        assert container.metadata["artist"] == "An Author"
        assert container.metadata["album_artist"] == "An Author"
        audio = next(s for s in container.streams if s.type == "audio")
        assert audio.codec_context.name == "aac" and audio.codec_context.sample_rate == 24000
        pictures = [
            s for s in container.streams if s.disposition & av.stream.Disposition.attached_pic
        ]
        assert len(pictures) == 1
        decoded = sum(f.samples for f in container.decode(audio))
        assert abs(decoded - total) <= 1024  # the encoder's priming is cut by the edit list

    tags = mutagen.mp4.MP4(out)
    assert tags.tags is not None
    assert tags.tags["\xa9nam"] == ["A Book"] and tags.tags["\xa9ART"] == ["An Author"]
    assert bytes(tags.tags["covr"][0]) == cover.data
    assert tags.tags["covr"][0].imageformat == mutagen.mp4.MP4Cover.FORMAT_PNG
    assert tags.chapters is not None
    assert [(round(c.start, 2), c.title) for c in tags.chapters] == [
        (0.0, "Opening"),
        (1.0, "Zwei – Ä"),
        (1.5, "三"),
    ]
    assert out.read_bytes()[4:12] == b"ftypM4B "  # what players take for a book


@settings(max_examples=15, deadline=None)
@given(titles=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
def test_any_chapter_titles_come_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, titles: list[str]
) -> None:
    titles = [t.replace("\x00", "") or "x" for t in titles]
    out = tmp_path_factory.mktemp("m4b") / "t.m4a"
    block = _tone(0.2 * len(titles))
    marks = [m4b.Mark(t, n * 4800) for n, t in enumerate(titles)]
    m4b.write(str(out), [block], len(block), marks, m4b.Tags(None, None, None))
    with av.open(str(out)) as container:
        assert [c["metadata"].get("title") for c in container.chapters()] == titles


def test_a_missing_directory_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"cannot write .*book.m4b: directory .* does not exist"):
        m4b.write(str(tmp_path / "no" / "book.m4b"), [], 0, [], m4b.Tags(None, None, None))


def test_a_jpeg_cover_s_size_is_read_from_its_frame_header() -> None:
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0\x00\x11\x08\x01\x2c\x02\x58\x03" + b"\x01\x22\x00" * 3
    jpeg = b"\xff\xd8" + app0 + b"\xff\xff" + sof0 + b"\xff\xd9"
    assert m4b.picture_size(Cover(jpeg, "image/jpeg")) == (600, 300)
    assert m4b.picture_size(Cover(_png(), "image/png")) == (4, 3)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=64), head=st.sampled_from([b"", b"\xff\xd8", b"\x89PNG\r\n\x1a\n"]))
def test_a_cover_that_is_no_picture_has_no_size_and_raises_nothing(
    data: bytes, head: bytes
) -> None:
    size = m4b.picture_size(Cover(head + data, "image/jpeg"))
    assert size is None or (size[0] > 0 and size[1] > 0)


def _claimed_png(width: int, height: int) -> bytes:
    """A PNG whose header claims this size (the rest of the picture is the small one)."""
    png = _png()
    return png[:16] + struct.pack(">II", width, height) + png[24:]


@settings(max_examples=12, deadline=None)
@given(
    width=st.integers(1, 2**31 - 1) | st.sampled_from([16384, 2**31 - 1]),
    height=st.integers(1, 2**31 - 1) | st.sampled_from([16384, 2**31 - 1]),
)
def test_a_cover_of_any_claimed_size_never_costs_the_book(
    tmp_path_factory: pytest.TempPathFactory, width: int, height: int
) -> None:
    """A book's cover comes from the book (a hostile one too): whatever size its header
    claims, the audiobook is written with its marks, with the cover or without it."""
    out = tmp_path_factory.mktemp("claimed") / "book.m4b"
    cover = Cover(_claimed_png(width, height), "image/png")
    marks = [m4b.Mark("One", 0), m4b.Mark("Two", 12000)]
    m4b.write(str(out), iter([_tone(1.0)]), 24000, marks, m4b.Tags("A Book", None, cover))
    with av.open(str(out)) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == ["One", "Two"]
        assert container.streams.audio[0].frames or container.duration
