"""An EPUB (2 or 3, read with ebooklib) into chapters: the spine gives the reading order,
the table of contents the chapters and their titles.

Nested entries are flattened in order; entries in one file cut it at their anchors;
spine documents no entry points at go on the chapter before (the contents page the
guide names is not read); entries at the same place ("Part One" and its first
chapter) make one chapter titled by both. A book without a
table of contents gets a chapter per spine document that has a heading, titled by its
first. A document marked as a book's notes is not read (html.py).
"""

from __future__ import annotations

import io
import logging
import posixpath
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from kokoro_say.book import Book, BookError, Chapter, Cover

from .drm import refuse_drm
from .html import Page, markup_text, read_page
from .sections import Block, chapters_from, name_title

_LOGGER = logging.getLogger("kokoro_say")
_COVER_TYPES = {"image/jpeg", "image/png"}
_MAX_UNPACKED = 1 << 30
_MAX_TITLES = 3  # table of contents entries at one place that title its chapter


@dataclass(frozen=True)
class _Entry:
    title: str
    doc: int  # index in the spine
    block: int  # paragraph of that document where the chapter starts


def read_epub_book(path: Path, data: bytes) -> Book:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as err:
        raise BookError(f"cannot read {path.name}: it is not a valid EPUB") from err
    refuse_drm(archive, path.name)
    # ebooklib unpacks every file into memory: a book that would fill it is refused
    # by the sizes its archive declares, before anything is unpacked.
    if sum(info.file_size for info in archive.infolist()) > _MAX_UNPACKED:
        raise BookError(f"{path.name} is too large to read: over 1 GiB unpacked")
    book = _load(data, path.name)
    flat = _flat(book.toc)
    docs = _reading_order(_not_contents(book, _spine_documents(book)), flat)
    pages = [read_page(_text(item)) for item in docs]
    names = {item.get_name(): i for i, item in enumerate(docs)}
    entries = _entries(flat, names, pages)
    title = _metadata(book, "title")
    if entries:
        chapters = _by_toc(entries, pages, title or name_title(path))
    else:
        blocks = [b for page in pages for b in _first_heading_only(page.blocks)]
        chapters = chapters_from(blocks, title or name_title(path))
    return Book(
        title=title,
        author=_metadata(book, "creator"),
        language=_metadata(book, "language"),
        cover=_cover(book),
        chapters=tuple(chapters),
    )


def _load(data: bytes, name: str) -> Any:
    from ebooklib import epub  # lxml with it: only when a book is read

    try:
        return epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    except Exception as err:  # ebooklib raises KeyError, lxml errors, EpubException...
        _LOGGER.debug("ebooklib could not read %s", name, exc_info=True)
        raise BookError(f"cannot read {name}: it is not a valid EPUB") from err


def _spine_documents(book: Any) -> list[tuple[Any, bool]]:
    """The spine's documents, each with whether it is in the reading order (linear)."""
    from ebooklib import epub

    docs = []
    seen: set[str] = set()
    for idref, linear in book.spine:
        item = book.get_item_with_id(idref)
        # The navigation document is the table of contents: heard as chapter marks.
        # A document listed twice (not allowed, but seen) is read at its first place.
        if (
            isinstance(item, epub.EpubHtml)
            and not isinstance(item, epub.EpubNav)
            and item.get_name() not in seen
        ):
            seen.add(item.get_name())
            docs.append((item, str(linear).lower() != "no"))
    return docs


def _not_contents(book: Any, spine: list[tuple[Any, bool]]) -> list[tuple[Any, bool]]:
    """The spine without the contents page the guide names (EPUB 2's table of
    contents, a page of links): heard as chapter marks, not read. A guide entry that
    points into a page (an anchor) leaves the page read: it may hold prose too."""
    names = {item.get_name(): i for i, (item, _) in enumerate(spine)}
    pages = {
        _find(posixpath.normpath(unquote(str(ref.get("href", "")))), names)
        for ref in getattr(book, "guide", None) or ()
        if isinstance(ref, dict)
        and str(ref.get("type", "")).lower() == "toc"
        and "#" not in str(ref.get("href", ""))
    }
    kept = [doc for i, doc in enumerate(spine) if i not in pages]
    return kept or spine


def _reading_order(spine: list[tuple[Any, bool]], flat: list[tuple[str, str]]) -> list[Any]:
    """A document out of the reading order (a pop-up note, an answer) is read only
    where the table of contents names it."""
    names = {item.get_name(): i for i, (item, _) in enumerate(spine)}
    named = {_find(posixpath.normpath(unquote(href).partition("#")[0]), names) for _, href in flat}
    return [item for i, (item, linear) in enumerate(spine) if linear or i in named]


def _text(item: Any) -> str:
    content = item.get_content()
    return markup_text(content, item.get_name()) if isinstance(content, bytes) else str(content)


def _flat(toc: Any) -> list[tuple[str, str]]:
    """(title, href) of every entry, depth first, in the order the book lists them."""
    out: list[tuple[str, str]] = []
    for entry in toc or ():
        if isinstance(entry, tuple):
            section, children = entry
            if getattr(section, "href", ""):
                out.append((section.title, section.href))
            out += _flat(children)
        elif getattr(entry, "href", ""):
            out.append((entry.title, entry.href))
    return out


def _entries(flat: list[tuple[str, str]], names: dict[str, int], pages: list[Page]) -> list[_Entry]:
    entries: dict[tuple[int, int], _Entry] = {}
    joined: dict[tuple[int, int], int] = {}  # titles in each place's title so far
    for title, href in flat:
        file, _, anchor = unquote(href).partition("#")
        doc = _find(posixpath.normpath(file), names)
        if doc is None:
            continue
        block = pages[doc].anchors.get(anchor, 0) if anchor else 0
        title = " ".join((title or "").split())
        at = (doc, block)
        if at in entries:  # "Part One" and its first chapter: one chapter, both named
            # The first few name it ("Book One: Part One: Chapter 1"); more are a broken
            # table of contents, not a title.
            if not title or joined[at] >= _MAX_TITLES:
                continue
            title = f"{entries[at].title}: {title}"
        joined[at] = joined.get(at, 0) + 1
        entries[at] = _Entry(title, doc, block)
    return sorted(entries.values(), key=lambda e: (e.doc, e.block))


def _find(file: str, names: dict[str, int]) -> int | None:
    if file in names:
        return names[file]
    # An NCX's paths are relative to its own folder: matched by their ends.
    ends = [
        i for name, i in names.items() if name.endswith("/" + file) or file.endswith("/" + name)
    ]
    return ends[0] if len(ends) == 1 else None


def _by_toc(entries: list[_Entry], pages: list[Page], opening: str) -> list[Chapter]:
    cuts = [(e.doc, e.block) for e in entries]
    chapters: list[Chapter] = []
    starts = [(0, 0), *cuts]
    titles = [opening, *(e.title for e in entries)]
    ends = [*cuts, (len(pages), 0)]
    for n, (title, start, end) in enumerate(zip(titles, starts, ends, strict=True)):
        blocks = _between(pages, start, end)
        if n == 0 and not blocks:  # the book starts with its first entry
            continue
        text = "\n\n".join(b.text for b in blocks)
        chapters.append(Chapter(title=title or (blocks[0].text if blocks else ""), text=text))
    return chapters


def _between(pages: list[Page], start: tuple[int, int], end: tuple[int, int]) -> list[Block]:
    out: list[Block] = []
    for doc in range(start[0], min(end[0], len(pages) - 1) + 1):
        first = start[1] if doc == start[0] else 0
        last = end[1] if doc == end[0] else len(pages[doc].blocks)
        out += pages[doc].blocks[first:last]
    return out


def _first_heading_only(blocks: list[Block]) -> list[Block]:
    """A document's first heading starts a chapter; its other headings are read."""
    out, seen = [], False
    for block in blocks:
        out.append(Block(block.text, 1) if block.heading and not seen else Block(block.text))
        seen = seen or block.heading
    return out


def _metadata(book: Any, name: str) -> str | None:
    values = book.get_metadata("DC", name)
    text = " ".join(str(values[0][0] or "").split()) if values else ""
    return text or None


def _cover(book: Any) -> Cover | None:
    from ebooklib import epub

    items = [i for i in book.get_items() if isinstance(i, epub.EpubCover)]
    if not items:  # EPUB 2 names its cover in a <meta name="cover">
        for _value, attrs in book.get_metadata("OPF", "cover"):
            item = book.get_item_with_id((attrs or {}).get("content", ""))
            if item is not None:
                items.append(item)
    for item in items:
        mime = getattr(item, "media_type", "")
        if mime in _COVER_TYPES and item.get_content():
            return Cover(data=bytes(item.get_content()), mime=mime)
    return None
