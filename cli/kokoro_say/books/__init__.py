"""Long documents read into a `Book`: which reader a file's extension calls, and what
every reader shares (a file that cannot be read, chapters with nothing to say).

Each chapter's text starts with its heading as the document shows it, so the heading
is heard; its `title` is what a player shows.
"""

from __future__ import annotations

import errno
import importlib
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from kokoro_say.book import Book, BookError

from .markdown import read_markdown_book
from .plain import read_text_book
from .sections import spoken

Reader = Callable[[Path, bytes], Book]


def _epub(path: Path, data: bytes) -> Book:
    from .epub import read_epub_book  # ebooklib and lxml only when a book is read

    _require(path, "ebooklib", "lxml")
    return read_epub_book(path, data)


def _pdf(path: Path, data: bytes) -> Book:
    from .pdf import read_pdf_book

    _require(path, "pypdf")
    return read_pdf_book(path, data)


def _require(path: Path, *modules: str) -> None:
    """BookError if a reader's library is not installed (the container images leave
    the EPUB and PDF readers out: they serve speech)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            raise BookError(
                f"cannot read {path.name}: this installation has no {err.name or module} "
                f"package, which reads {path.suffix.lower()} files "
                f"(install it with: pip install {err.name or module})"
            ) from err


def _html(path: Path, data: bytes) -> Book:
    from .html import read_html_book

    return read_html_book(path, data)


def _ssml(path: Path, data: bytes) -> Book:
    from .ssml import read_ssml_book

    return read_ssml_book(path, data)


READERS: dict[str, Reader] = {
    ".epub": _epub,
    ".pdf": _pdf,
    ".html": _html,
    ".htm": _html,
    ".xhtml": _html,
    ".md": read_markdown_book,
    ".markdown": read_markdown_book,
    ".txt": read_text_book,
    ".ssml": _ssml,
}
# Files that are never SSML text, whatever the options say.
_PACKAGED = {".epub": "an EPUB", ".pdf": "a PDF"}


def is_document(path: Path) -> bool:
    """Whether `read_book` reads this file by its extension."""
    return path.suffix.lower() in READERS


def read_book(path: Path, *, ssml: bool = False) -> Book:
    """The document at `path` as chapters (`ssml`: read as SSML whatever its name).

    Raises BookError, with a message for the user, when it cannot be read or says
    nothing; chapters that say nothing are left out with one warning.
    """
    name = path.name
    suffix = path.suffix.lower()
    if ssml and suffix in _PACKAGED:
        raise BookError(f"{name} is {_PACKAGED[suffix]}, not SSML: read it without --ssml")
    reader = _ssml if ssml else READERS.get(suffix)
    if reader is None:
        kinds = ", ".join(sorted(READERS))
        raise BookError(f"cannot read {name}: not a kind of document kokoro-say reads ({kinds})")
    try:
        data = path.read_bytes()
    except OSError as err:
        reason = os.strerror(err.errno) if err.errno else "cannot be opened"
        if err.errno == errno.EISDIR:
            reason = "it is a directory"
        raise BookError(f"cannot read {name}: {reason.lower()}") from err
    book = reader(path, data)
    chapters = tuple(replace(c, title=_shown(c.title)) for c in spoken(list(book.chapters)))
    if not chapters:
        raise BookError(f"{name} has nothing to say: no text in it is read aloud")
    title, author = (_shown(t) if t else t for t in (book.title, book.author))
    return replace(book, title=title or None, author=author or None, chapters=chapters)


def _shown(text: str) -> str:
    """A title as printed and tagged: without control characters (a book's escape
    sequences would reach the terminal), its spaces collapsed."""
    return " ".join(_CONTROL.sub(" ", text).split())


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
