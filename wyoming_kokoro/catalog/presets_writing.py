"""A preset saved or removed from the page: the first data dir's `presets.yaml` changed
in place, the user's other entries and comments kept.

What is valid is decided by the reader (presets_file.py) alone: a preset is checked
with its checks and refused in its words, and the new text is read back by it before
it replaces the file, so the server never writes what it would then skip.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog.file_edit import EditError, edit_text_file
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.catalog.presets_file import (
    MAX_PRESETS,
    MAX_PRESETS_BYTES,
    PRESETS_FILE,
    PresetsFileError,
    parse_presets,
    preset_from_fields,
    presets_root,
)


def check_preset(name: str, fields: dict[str, Any], installed: tuple[str, ...]) -> Preset:
    """The preset these fields make, as the reader would take it from a file; EditError
    with the reader's words if it would skip it."""
    name = name.strip()[:80]  # as the reader takes a name
    for key, value in fields.items():
        if isinstance(value, (dict, list)):
            raise EditError(f"{str(key)[:40]} must be a single value")
    try:
        return preset_from_fields(name, fields, installed)
    except ValueError as err:
        raise EditError(str(err)) from None


def save_preset(
    data_dir: Path, name: str, fields: dict[str, Any], installed: tuple[str, ...]
) -> Preset:
    """Write the preset into `data_dir`'s presets.yaml (in place of one of that name);
    EditError if it is refused, OSError if the file cannot be written."""
    preset = check_preset(name, fields, installed)
    entry = _entry_text(preset.name, fields)

    def change(old: bytes | None) -> bytes:
        text = _text(old)
        lines, spans = _spans(text, preset.name)
        with _quiet():
            count = len(parse_presets(text, installed, PRESETS_FILE))
        if not spans and count >= MAX_PRESETS:
            raise EditError(f"more than {MAX_PRESETS} presets")
        if spans:
            first = spans[0][0]
            kept = _without(lines, spans)
            at = sum(1 for i in range(first) if not _in(i, spans))
            new = "".join(kept[:at]) + entry + "".join(kept[at:])
        else:
            new = _ending(text) + entry
        _check_read_back(new, text, installed, preset.name, preset)
        return new.encode("utf-8")

    edit_text_file(data_dir / PRESETS_FILE, change)
    return preset


def remove_preset(data_dir: Path, name: str, installed: tuple[str, ...]) -> None:
    """Take the preset out of `data_dir`'s presets.yaml; EditError if it is not there."""
    name = name.strip()

    def change(old: bytes | None) -> bytes:
        text = _text(old)
        lines, spans = _spans(text, name)
        if not spans:
            raise EditError(f"no preset {name!r} in the presets saved here")
        new = "".join(_without(lines, spans))
        _check_read_back(new, text, installed, name, None)
        return new.encode("utf-8")

    edit_text_file(data_dir / PRESETS_FILE, change)


def _entry_text(name: str, fields: dict[str, Any]) -> str:
    import yaml  # type: ignore[import-untyped]

    body = {str(key): value for key, value in fields.items()}
    dumped: str = yaml.safe_dump(
        {name: body}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096
    )
    return dumped


def _text(old: bytes | None) -> str:
    if old is None:
        return ""
    if len(old) > MAX_PRESETS_BYTES:
        raise EditError(f"{PRESETS_FILE} is longer than {MAX_PRESETS_BYTES} bytes; edit it by hand")
    try:
        return old.decode("utf-8")
    except UnicodeDecodeError as err:
        raise EditError(
            f"{PRESETS_FILE} is not UTF-8 text (byte {err.start + 1}); fix it by hand first"
        ) from None


def _ending(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _spans(text: str, name: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The file's lines and the line ranges (first, last) of its entries named `name`."""
    import yaml

    try:
        root = presets_root(text, PRESETS_FILE)
    except PresetsFileError as err:
        raise EditError(f"{err}; fix it by hand first") from None
    lines = _ending(text).splitlines(keepends=True)
    if root is None:
        return lines, []
    if root.flow_style:
        raise EditError(f"{PRESETS_FILE} is written as one {{...}} mapping; edit it by hand")
    spans = []
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or str(key.value).strip()[:80] != name:
            continue
        if key.start_mark.column != 0:
            raise EditError(f"{PRESETS_FILE} is not laid out one preset a block; edit it by hand")
        spans.append((key.start_mark.line, max(key.start_mark.line, _last_line(value))))
    return lines, spans


def _last_line(node: Any) -> int:
    """The last line a node's text is on (a block ends where the next key starts)."""
    import yaml

    if isinstance(node, yaml.CollectionNode) and not node.flow_style and node.value:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(node, yaml.MappingNode) else last)
    mark = node.end_mark
    at_line_start = mark.column == 0 and mark.line > node.start_mark.line
    return int(mark.line - 1 if at_line_start else mark.line)


def _in(index: int, spans: list[tuple[int, int]]) -> bool:
    return any(first <= index <= last for first, last in spans)


def _without(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    return [line for i, line in enumerate(lines) if not _in(i, spans)]


def _check_read_back(
    new: str, old: str, installed: tuple[str, ...], name: str, preset: Preset | None
) -> None:
    """The new text reads as the old with only `name` changed, or nothing is written."""
    if len(new.encode("utf-8")) > MAX_PRESETS_BYTES:
        raise EditError(f"{PRESETS_FILE} would be longer than {MAX_PRESETS_BYTES} bytes")
    try:
        presets_root(new, PRESETS_FILE)
    except PresetsFileError:
        raise EditError(
            f"{PRESETS_FILE} cannot take the change as laid out; edit it by hand"
        ) from None
    with _quiet():
        before = parse_presets(old, installed, PRESETS_FILE)
        after = parse_presets(new, installed, PRESETS_FILE)
    if after.get(name) != preset or _others(before, name) != _others(after, name):
        raise EditError(f"{PRESETS_FILE} cannot take the change as laid out; edit it by hand")


def _others(presets: dict[str, Preset], name: str) -> dict[str, Preset]:
    return {key: value for key, value in presets.items() if key != name}


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The reader's warnings about the user's other entries held back while a save
    reads the file (this thread only): the rescan that follows logs them once."""
    me = threading.get_ident()

    def other_threads(record: logging.LogRecord) -> bool:
        return record.thread != me

    logger = logging.getLogger("wyoming_kokoro.catalog.presets_file")
    logger.addFilter(other_threads)
    try:
        yield
    finally:
        logger.removeFilter(other_threads)
