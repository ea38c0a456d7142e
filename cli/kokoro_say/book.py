"""A long document as kokoro-say speaks it: its chapters in reading order, with the
title, author and cover a player shows. Every input (a book, a PDF, a web page,
Markdown, plain text, SSML) is read into this one shape; every output (one file, a
chaptered M4B, a file per chapter) is written from it."""

from __future__ import annotations

from dataclasses import dataclass, field


class BookError(ValueError):
    """A document that cannot be read into chapters; the message is for the user."""


@dataclass(frozen=True)
class Chapter:
    """One chapter: its title as the document gives it, and what is spoken."""

    title: str
    # Plain text (paragraphs separated by blank lines), or an SSML document if `ssml`.
    text: str
    ssml: bool = False


@dataclass(frozen=True)
class Cover:
    data: bytes
    mime: str  # "image/jpeg" or "image/png"


@dataclass(frozen=True)
class Book:
    title: str | None
    author: str | None
    # The document's own language (BCP 47), if it names one.
    language: str | None
    cover: Cover | None
    chapters: tuple[Chapter, ...] = field(default_factory=tuple)
