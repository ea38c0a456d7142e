"""Pronunciations saved or removed from the page: the first data dir's `lexicon.txt`
changed line by line, every other line (comments, other words, even a line in another
encoding) kept byte for byte.

A line is checked by the reader's own `lexicon_entry`, so what is saved is what the
next request speaks with; the bounds are the reader's too.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from wyoming_kokoro.catalog.file_edit import EditError, edit_text_file
from wyoming_kokoro.text.g2p import (
    LEXICON_NAME,
    MAX_LEXICON_BYTES,
    MAX_LEXICON_ENTRIES,
    lexicon_entry,
)


def check_entry(word: str, pronunciation: str) -> tuple[str, str]:
    """The line's (word, pronunciation) as the reader takes them; EditError if the
    reader would skip the line or read it otherwise."""
    word, pronunciation = word.strip(), pronunciation.strip()
    line = f"{word}\t{pronunciation}"
    if "\n" in line or "\r" in line:
        raise EditError("a word and its pronunciation are one line each")
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        raise EditError("not UTF-8 text") from None
    try:
        entry = lexicon_entry(line)
    except ValueError as err:
        raise EditError(str(err)) from None
    if entry is None:
        raise EditError("a word may not start with '#': the line would be a comment")
    if entry != (word.lower(), pronunciation):
        raise EditError("a word is written without spaces")
    return entry


def save_entry(data_dir: Path, word: str, pronunciation: str) -> tuple[str, str]:
    """Write `word  pronunciation` into data_dir's lexicon.txt, in place of the word's
    lines if it has any (the last of them is the one read); EditError or OSError."""
    entry = check_entry(word, pronunciation)
    line = f"{word.strip()}\t{pronunciation.strip()}"

    def change(old: bytes | None) -> bytes:
        bom, lines = _lines(old)
        newline = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
        mine = [i for i, raw in enumerate(lines) if _word_of(raw) == entry[0]]
        new_line = line.encode("utf-8") + newline
        if mine:
            at = mine[-1] - (len(mine) - 1)
            kept = [raw for i, raw in enumerate(lines) if i not in mine]
            kept.insert(at, new_line)
        else:
            kept = lines[:]
            if kept and not kept[-1].endswith((b"\n", b"\r")):
                kept[-1] += newline
            if len(_words(kept)) >= MAX_LEXICON_ENTRIES:
                raise EditError(f"more than {MAX_LEXICON_ENTRIES} entries")
            kept.append(new_line)
        data = bom + b"".join(kept)
        if len(data) > MAX_LEXICON_BYTES:
            raise EditError(f"{LEXICON_NAME} would be longer than {MAX_LEXICON_BYTES} bytes")
        return data

    edit_text_file(data_dir / LEXICON_NAME, change)
    return entry


def remove_entry(data_dir: Path, word: str) -> None:
    """Take every line of `word` out of data_dir's lexicon.txt; EditError if none."""
    key = word.strip().lower()

    def change(old: bytes | None) -> bytes:
        bom, lines = _lines(old)
        kept = [raw for raw in lines if _word_of(raw) != key]
        if len(kept) == len(lines):
            raise EditError(f"no pronunciation of {word.strip()!r} in the lexicon saved here")
        return bom + b"".join(kept)

    edit_text_file(data_dir / LEXICON_NAME, change)


def read_entries(path: Path) -> dict[str, str]:
    """A lexicon's entries as the reader reads them, without its warnings (the page
    lists them on every look); {} if there is no file or it is too long."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_LEXICON_BYTES + 1)
    except OSError:
        return {}
    if len(data) > MAX_LEXICON_BYTES:
        return {}
    return _words(_lines(data)[1])


def _lines(data: bytes | None) -> tuple[bytes, list[bytes]]:
    data = data or b""
    if len(data) > MAX_LEXICON_BYTES:
        raise EditError(f"{LEXICON_NAME} is longer than {MAX_LEXICON_BYTES} bytes; edit it by hand")
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    return bom, data[len(bom) :].splitlines(keepends=True)


def _parsed(raw: bytes) -> tuple[str, str] | None:
    try:
        return lexicon_entry(raw.decode("utf-8"))
    except ValueError:  # not UTF-8, or not `word pronunciation`: the reader skips it
        return None


def _word_of(raw: bytes) -> str | None:
    entry = _parsed(raw)
    return entry[0] if entry else None


def _words(lines: list[bytes]) -> dict[str, str]:
    entries: dict[str, str] = {}
    for raw in lines:
        entry = _parsed(raw)
        if entry is None:
            continue
        if entry[0] not in entries and len(entries) >= MAX_LEXICON_ENTRIES:
            break
        entries[entry[0]] = entry[1]
    return entries
