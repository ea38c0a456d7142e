"""An SSML document as one chapter, spoken as SSML: the server's subset and its checks
(wyoming_kokoro/text/ssml.py), run here first so a refused document fails before any
audio is made."""

from __future__ import annotations

from pathlib import Path

from kokoro_say.book import Book, BookError, Chapter
from kokoro_say.reading import decoded
from wyoming_kokoro.text.ssml import Say, SsmlError, parse

from .sections import name_title


def read_ssml_book(path: Path, data: bytes) -> Book:
    text = decoded(data, path.name)
    try:
        segments = parse(text)
    except SsmlError as err:
        raise BookError(f"cannot read {path.name}: {err}") from err
    said = " ".join(s.text for s in segments if isinstance(s, Say))
    title = name_title(path)
    # What is said decides whether the chapter is empty; the document is what is spoken.
    chapters = (Chapter(title=title, text=text, ssml=True),) if said.strip() else ()
    return Book(title=title, author=None, language=None, cover=None, chapters=chapters)
