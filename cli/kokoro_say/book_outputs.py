"""Where a long document's audio goes, joined in the book's order from its finished
parts: one audio file (chapters a pause apart), an M4B with a chapter mark per
chapter, or a directory with a numbered file per chapter (and its captions)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wyoming_kokoro.audio import SAMPLE_RATE, silence
from wyoming_kokoro.timeline import WordTime

from . import m4b
from .book import Book
from .captions import FORMATS as CAPTION_FORMATS
from .captions import CaptionFile
from .output import AudioSink
from .plan import CHAPTER_PAUSE
from .resume import WorkDir

# A chapter file's name: "07 The Title.flac", the title cut to what every file system takes.
_NAME_CHARS = 80
_UNSAFE = re.compile(r'[\x00-\x1f/\\:*?"<>|]+')
_CHAPTER_NAME = re.compile(r"\d+( |\.)")
# Hidden in a chapter directory: the files the last run wrote there (see _forget_stale).
_WRITTEN = ".kokoro-say-chapters.json"
_LOGGER = logging.getLogger("kokoro_say")


@dataclass(frozen=True)
class Target:
    kind: str  # "file", "m4b" or "dir"
    path: str
    fmt: str  # the audio format of "file" and "dir"


def chaptered(output: str) -> bool:
    """An output that keeps the chapters: an M4B/M4A, or a directory."""
    return output.lower().endswith(m4b.EXTENSIONS) or is_dir_output(output)


def is_dir_output(output: str) -> bool:
    return output != "-" and (output.endswith("/") or os.path.isdir(output))


@dataclass(frozen=True)
class Spoken:
    """A chapter as it is written: its number, title and its parts' keys, in order."""

    number: int
    title: str
    parts: tuple[str, ...]


def chapter_file(directory: str, spoken: Spoken, count: int, ext: str) -> str:
    width = max(2, len(str(count)))
    title = _UNSAFE.sub(" ", spoken.title).strip().lstrip(".").strip()[:_NAME_CHARS].strip()
    name = f"{spoken.number:0{width}d} {title}".strip() if title else f"{spoken.number:0{width}d}"
    return os.path.join(directory, f"{name}.{ext}")


def caption_ext(asked: str) -> str:
    """The captions' format for a directory: `srt`, or a name ending in .srt."""
    ext = asked.lower().rsplit(".", 1)[-1]
    if ext not in CAPTION_FORMATS:
        raise ValueError(f"cannot write captions as {asked}: name it .srt, .vtt or .json")
    return ext


class Joiner:
    """Reads the finished parts back in order, placing their words in one time line."""

    def __init__(self, work: WorkDir, lead: float, tail: float) -> None:
        self._work = work
        self._lead = silence(lead)
        self._tail = silence(tail)
        self.words: list[WordTime] = []

    def samples(self, chapters: list[Spoken], joined: bool) -> tuple[int, list[int]]:
        """The total length and each chapter's start, in samples, from the parts' headers."""
        at = len(self._lead)
        starts = []
        for number, chapter in enumerate(chapters):
            if joined and number:
                at += len(silence(CHAPTER_PAUSE))
            starts.append(at)
            for key in chapter.parts:
                length = self._work.samples(key)
                if length is None:
                    raise OSError("a finished part is gone or damaged: run again")
                at += length
        return at + len(self._tail), starts

    def audio(self, chapters: list[Spoken], joined: bool = True) -> Iterator[np.ndarray]:
        """Lead silence, the chapters (a pause apart if `joined`), tail silence."""
        at = 0
        self.words = []
        yield self._lead
        at += len(self._lead)
        for number, chapter in enumerate(chapters):
            if joined and number:
                gap = silence(CHAPTER_PAUSE)
                yield gap
                at += len(gap)
            for key in chapter.parts:
                pcm, words = self._work.load(key)
                self.words += [w.shifted(at / SAMPLE_RATE) for w in words]
                yield pcm
                at += len(pcm)
        yield self._tail


def write(
    target: Target,
    book: Book,
    chapters: list[Spoken],
    joiner: Joiner,
    sink: AudioSink | None,
    captions: str | None,
    spaced: bool,
) -> None:
    """Write the output from the finished parts. `sink` (the single file) and the
    caption file were opened before speaking: a path that cannot be written costs no
    synthesis. A directory's captions are named after its chapter files."""
    if target.kind == "dir":
        _write_dir(target, chapters, joiner, captions, spaced)
        return
    with _captioned(captions, joiner, spaced):
        if target.kind == "m4b":
            total, starts = joiner.samples(chapters, joined=True)
            # The first mark at 0 (a player's start), each other at its chapter's audio.
            marks = [
                m4b.Mark(chapter.title, start if number else 0)
                for number, (chapter, start) in enumerate(zip(chapters, starts, strict=True))
            ]
            tags = m4b.Tags(book.title, book.author, book.cover)
            m4b.write(target.path, joiner.audio(chapters), total, marks, tags)
        else:
            assert sink is not None
            with sink:
                for block in joiner.audio(chapters):
                    sink.write(block)


def _write_dir(
    target: Target, chapters: list[Spoken], joiner: Joiner, captions: str | None, spaced: bool
) -> None:
    written: list[str] = []
    for chapter in chapters:
        path = chapter_file(target.path, chapter, len(chapters), target.fmt)
        written.append(os.path.basename(path))
        caption_path = None
        if captions:
            caption_path = str(Path(path).with_suffix("." + caption_ext(captions)))
            written.append(os.path.basename(caption_path))
        with _captioned(caption_path, joiner, spaced), AudioSink(path, target.fmt) as sink:
            for block in joiner.audio([chapter], joined=False):
                sink.write(block)
    _forget_stale(target.path, written)


@contextlib.contextmanager
def _captioned(path: str | None, joiner: Joiner, spaced: bool) -> Iterator[None]:
    """The captions of the audio written in the block, to `path` (None: none): the file
    is checked before the block and named only once the block has written its audio."""
    if path is None:
        yield
        return
    caption_file = CaptionFile(path)
    try:
        yield
        caption_file.write(joiner.words, spaced)
    finally:
        caption_file.discard()


def _forget_stale(directory: str, written: list[str]) -> None:
    """Remove the chapter files the last run into `directory` wrote and this one did
    not (a book edited, or read into other chapters): a player would play both. Only
    what kokoro-say listed is touched; the list is kept hidden in the directory."""
    listed = os.path.join(directory, _WRITTEN)
    try:
        with open(listed, encoding="utf-8") as file:
            before = json.load(file)
    except (OSError, ValueError):
        before = []
    keep = set(written)
    for name in before if isinstance(before, list) else []:
        if isinstance(name, str) and name not in keep and _is_chapter_name(name):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{_WRITTEN}.tmp", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(written, file, ensure_ascii=False)
        os.replace(tmp, listed)
    except OSError as err:  # the chapters are written: only the next run's tidying is lost
        _LOGGER.debug("Could not list the chapter files of %s: %s", directory, err)


def _is_chapter_name(name: str) -> bool:
    return os.path.basename(name) == name and _CHAPTER_NAME.match(name) is not None
