"""A presets file (`presets.yaml`) read safely: each entry checked and made a `Preset`,
a bad one named in a warning with its line while the others load.

The server reads these files at start-up and again at each rescan (on the event loop),
so a hostile file must cost little to refuse: size, depth and count are bounded
before PyYAML builds anything, and only plain scalars are accepted.
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path
from typing import Any

from wyoming_kokoro.audio import LONGEST_PAUSE_MS
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.catalog.voices import VoiceError, parse_voice, reading_language_of
from wyoming_kokoro.options import SPEED, VOLUME_RANGE

_LOGGER = logging.getLogger(__name__)

PRESETS_FILE = "presets.yaml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-. ]{0,63}$")
_FIELDS = frozenset(
    {
        *("voice", "speed", "volume", "language", "description"),
        *("sentence_pause", "paragraph_pause", "lead_silence", "tail_silence"),
    }
)
# A presets file is a few kB; these bounds keep a hostile one cheap to reject (it is
# read on the event loop at a rescan) and keep PyYAML's recursive composer shallow.
MAX_PRESETS_BYTES = 256_000
MAX_DEPTH = 8  # the format needs 3: names, fields, values
MAX_PRESETS = 500
MAX_WARNINGS = 10  # per file; then one line counts the rest
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null")
)


class _Bad(ValueError):
    pass


def _number(value: Any, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"{key} must be a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise _Bad(f"{key} must be {low:g}-{high:g}, got {value}")
    return float(value)


def _pause(value: Any, key: str) -> int | None:
    """A preset's pause: whole milliseconds, as the option takes them (None: unset)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"{key} must be whole milliseconds, such as 500")
    if not 0 <= value <= LONGEST_PAUSE_MS:
        raise _Bad(f"{key} must be 0-{LONGEST_PAUSE_MS} (milliseconds), got {value}")
    return value


def _preset(name: str, fields: dict[str, Any], installed: tuple[str, ...]) -> Preset:
    if not _NAME.match(name):
        raise _Bad("a name is letters, digits, '_', '-', '.' or spaces (at most 64)")
    if name in installed:
        raise _Bad("a voice of that name is installed; pick another name")
    unknown = set(fields) - _FIELDS
    if unknown:
        raise _Bad(f"unknown field {sorted(unknown)[0]!r}; use {', '.join(sorted(_FIELDS))}")
    voice = fields.get("voice")
    if not isinstance(voice, str):
        raise _Bad("'voice' (a voice or a blend) is required")
    try:
        spec = parse_voice(voice, installed)
        language = fields.get("language")
        if language is not None:
            if not isinstance(language, str):
                raise _Bad("language must be a string such as en-gb")
            language = reading_language_of(language)
    except VoiceError as err:
        raise _Bad(str(err)) from None
    speed = fields.get("speed")
    volume = fields.get("volume", 1.0)
    description = fields.get("description", "")
    if not isinstance(description, str):
        raise _Bad("description must be a string")
    return Preset(
        name=name,
        voice=str(spec),
        speed=None if speed is None else _number(speed, "speed", SPEED.low or 0.5, SPEED.high or 2),
        volume=_number(volume, "volume", *VOLUME_RANGE),
        language=language,
        description=description.strip()[:200],
        sentence_pause=_pause(fields.get("sentence_pause"), "sentence_pause"),
        paragraph_pause=_pause(fields.get("paragraph_pause"), "paragraph_pause"),
        # Silence before and after an answer: the same whole milliseconds, the same bound.
        lead_silence=_pause(fields.get("lead_silence"), "lead_silence"),
        tail_silence=_pause(fields.get("tail_silence"), "tail_silence"),
    )


class PresetsFileError(ValueError):
    """A presets file that cannot be read as a whole (not its entries)."""


def _loader() -> type:
    import yaml  # type: ignore[import-untyped]

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
        """SafeLoader whose composer stops at MAX_DEPTH instead of recursing on."""

        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    mark = self.peek_event().start_mark
                    raise yaml.composer.ComposerError(
                        None, None, f"nested deeper than {MAX_DEPTH} levels", mark
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def _root(text: str, source: str) -> Any:
    """The file's top mapping node (None if empty); PresetsFileError if unusable."""
    import yaml

    try:
        # compose: nodes with their line numbers, no objects built (safe, and an alias
        # bomb stays one node: only scalars are read)
        root = yaml.compose(text, Loader=_loader())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise PresetsFileError(f"{source}{line}: not valid YAML: {err}") from None
    if root is not None and not isinstance(root, yaml.MappingNode):
        line = root.start_mark.line + 1
        raise PresetsFileError(f"{source}:{line}: expected preset names as keys")
    return root


def _scalar(node: Any) -> Any:
    """A field's value from its node: plain types only, built without re-parsing text."""
    import yaml

    if node.tag not in _SCALAR_TAGS:
        raise _Bad(f"unsupported value {node.tag!r}")
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    try:
        return yaml.constructor.SafeConstructor().construct_object(node)
    except (yaml.YAMLError, ValueError) as err:  # e.g. an int longer than Python reads
        raise _Bad(f"unreadable value: {str(err)[:80]}") from None


def parse_presets(text: str, installed: tuple[str, ...], source: str) -> dict[str, Preset]:
    """Presets in one file's text; each bad entry logs one warning with its line."""
    try:
        root = _root(text, source)
    except PresetsFileError as err:
        _LOGGER.warning("%s; no presets read from it", err)
        return {}
    return _entries(root, installed, source)


def _entries(root: Any, installed: tuple[str, ...], source: str) -> dict[str, Preset]:
    import yaml

    if root is None:
        return {}
    found: dict[str, Preset] = {}
    skipped = 0
    for key, value in root.value:
        line = key.start_mark.line + 1
        name = str(key.value).strip()[:80] if isinstance(key, yaml.ScalarNode) else "?"
        try:
            if len(found) >= MAX_PRESETS:
                raise _Bad(f"more than {MAX_PRESETS} presets")
            if not isinstance(value, yaml.MappingNode):
                raise _Bad("expected fields (voice, speed, volume, language, description)")
            fields: dict[str, Any] = {}
            for field_key, field_value in value.value:
                if not isinstance(field_value, yaml.ScalarNode):
                    raise _Bad(f"{str(field_key.value)[:40]} must be a single value")
                fields[str(field_key.value)] = _scalar(field_value)
            if name in found:
                raise _Bad("defined twice; the first one is kept")
            found[name] = _preset(name, fields, installed)
        except _Bad as err:
            skipped += 1
            if skipped <= MAX_WARNINGS:
                _LOGGER.warning("%s:%d: preset %r skipped: %s", source, line, name, err)
    if skipped > MAX_WARNINGS:
        _LOGGER.warning("%s: %d more presets skipped", source, skipped - MAX_WARNINGS)
    return found


def preset_files(data_dirs: tuple[Path, ...] | list[Path]) -> list[Path]:
    """The presets files of the data dirs, in their order (the first wins a name)."""
    return [d / PRESETS_FILE for d in data_dirs if (d / PRESETS_FILE).is_file()]


def read_presets_text(path: Path) -> str:
    """A presets file's text, bounded in size; PresetsFileError if it cannot be used."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PRESETS_BYTES + 1)
    except OSError as err:
        raise PresetsFileError(f"{path}: cannot read presets: {err}") from None
    if len(raw) > MAX_PRESETS_BYTES:
        raise PresetsFileError(f"{path}: longer than {MAX_PRESETS_BYTES} bytes, not read")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PresetsFileError(f"{path}: not UTF-8 text (byte {err.start + 1})") from None


class PresetFiles:
    """The data dirs' presets, keeping each file's last good text across re-reads.

    A file that turns unreadable while the server runs (half-written, junk, nested
    too deep) costs one warning; its previous presets stay offered meanwhile.
    """

    def __init__(self, data_dirs: tuple[Path, ...] | list[Path]) -> None:
        self._dirs = tuple(data_dirs)
        self._good: dict[Path, str] = {}

    def remember(self) -> None:
        """Note the files' current texts as good where they read (logs nothing)."""
        for path in preset_files(self._dirs):
            try:
                text = read_presets_text(path)
                _root(text, str(path))
            except PresetsFileError:
                continue
            self._good[path] = text

    def load(self, installed: tuple[str, ...]) -> dict[str, Preset]:
        """Every data dir's presets; a name in an earlier dir wins."""
        presets: dict[str, Preset] = {}
        files = preset_files(self._dirs)
        for gone in set(self._good) - set(files):  # removed: nothing of it is kept
            del self._good[gone]
        for path in files:
            try:
                text = read_presets_text(path)
                root = _root(text, str(path))
            except PresetsFileError as err:
                kept = self._good.get(path)
                note = "; its last good presets are kept" if kept else "; no presets read from it"
                _LOGGER.warning("%s%s", err, note)
                if kept is None:
                    continue
                text = kept
                root = _root(text, str(path))
            self._good[path] = text
            for name, preset in _entries(root, installed, str(path)).items():
                presets.setdefault(name, preset)
        if presets:
            _LOGGER.info("Presets: %s", ", ".join(presets))
        return presets


def load_presets(
    data_dirs: tuple[Path, ...] | list[Path], installed: tuple[str, ...]
) -> dict[str, Preset]:
    """Every data dir's presets; a name in an earlier dir wins."""
    return PresetFiles(data_dirs).load(installed)


# For presets_writing.py (a preset saved from the page): the reader's own checks, so
# a preset written by the server reads back as it was saved, or is refused in the
# words this reader would log for it.
def preset_from_fields(name: str, fields: dict[str, Any], installed: tuple[str, ...]) -> Preset:
    """A preset from an entry's name and fields as read from a file; ValueError if bad."""
    return _preset(name, fields, installed)


def presets_root(text: str, source: str) -> Any:
    """A file's top mapping node with its line marks (None: empty); PresetsFileError."""
    return _root(text, source)
