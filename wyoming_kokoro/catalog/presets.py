"""Presets: named voices with their own speed, volume and language (`presets.yaml`).

Home Assistant sends only a voice name, never a speed or a volume: a preset is how
its user gets a slower voice, a louder blend or a British reading. Each preset is
offered as a voice of its own (in `info`, `/v1/audio/voices`, `kokoro-say
--list-voices`) and is usable by name wherever a voice is. A bad entry is one
warning naming its line; the others still load.

    # presets.yaml in a data dir
    slow_kumo:
      voice: jm_kumo
      speed: 0.8
      description: Kumo, slowly
    narrator:
      voice: af_bella(2)+af_sky(1)
      volume: 1.2
      language: en-gb
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog.voices import (
    LANGUAGES,
    VoiceError,
    describe_voice,
    g2p_language,
    parse_voice,
    reading_language_of,
    spoken_locales,
)
from wyoming_kokoro.options import SPEED, VOLUME_RANGE

_LOGGER = logging.getLogger(__name__)

PRESETS_FILE = "presets.yaml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-. ]{0,63}$")
_FIELDS = frozenset({"voice", "speed", "volume", "language", "description"})
MAX_PRESETS_BYTES = 1_000_000


@dataclass(frozen=True)
class Preset:
    """One named voice: a voice or blend with its speed, volume and language."""

    name: str
    voice: str  # canonical, as parse_voice prints it
    speed: float | None = None  # None: the server's --speed
    volume: float = 1.0
    language: str | None = None  # a G2P language code; None: the voice's own
    description: str = ""

    @property
    def locales(self) -> list[str]:
        """Where Home Assistant lists it: its language's locale, else its voice's."""
        if self.language:
            for lang in LANGUAGES.values():
                if lang.espeak == self.language:
                    return [lang.locale]
            if self.language.startswith("en"):
                return ["en_US", "en_GB"]
        primary = max(self.voice.split("+"), key=lambda p: _weight(p)).split("(")[0]
        return spoken_locales(primary)

    @property
    def title(self) -> str:
        if self.description:
            return self.description
        parts = [describe_voice(p.split("(")[0]).title for p in self.voice.split("+")]
        return f"{self.name}: {' + '.join(parts)}"


def _weight(part: str) -> float:
    match = re.search(r"\(([^)]*)\)", part)
    try:
        return float(match.group(1)) if match else 1.0
    except ValueError:
        return 1.0


@dataclass(frozen=True)
class Choice:
    """What a request's voice name comes to: voice, speed, volume, reading language."""

    voice: str
    speed: float
    volume: float
    lang: str
    preset: str | None = None


def choose(
    name: str,
    installed: tuple[str, ...],
    presets: dict[str, Preset],
    speed: float,
    lang: str | None = None,
) -> Choice:
    """A voice, a blend or a preset by name (VoiceError if none); `lang` overrides."""
    preset = presets.get(name.strip())
    if preset is not None:
        spec = parse_voice(preset.voice, installed)
        language = g2p_language(spec, override=lang or preset.language)
        return Choice(
            str(spec),
            preset.speed if preset.speed is not None else speed,
            preset.volume,
            language,
            preset.name,
        )
    spec = parse_voice(name, installed)
    return Choice(str(spec), speed, 1.0, g2p_language(spec, override=lang))


class _Bad(ValueError):
    pass


def _number(value: Any, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"{key} must be a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise _Bad(f"{key} must be {low:g}-{high:g}, got {value}")
    return float(value)


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
    )


def parse_presets(text: str, installed: tuple[str, ...], source: str) -> dict[str, Preset]:
    """Presets in one file's text; each bad entry logs one warning with its line."""
    import yaml  # type: ignore[import-untyped]

    try:
        # compose: nodes with their line numbers, no objects built (safe, and an alias
        # bomb stays one node: only scalars are read)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        _LOGGER.warning("%s%s: not valid YAML, no presets read from it: %s", source, line, err)
        return {}
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        _LOGGER.warning("%s:%d: expected preset names as keys", source, root.start_mark.line + 1)
        return {}
    found: dict[str, Preset] = {}
    for key, value in root.value:
        line = key.start_mark.line + 1
        name = str(key.value).strip() if isinstance(key, yaml.ScalarNode) else "?"
        try:
            if not isinstance(value, yaml.MappingNode):
                raise _Bad("expected fields (voice, speed, volume, language, description)")
            fields: dict[str, Any] = {}
            for field_key, field_value in value.value:
                if not isinstance(field_value, yaml.ScalarNode):
                    raise _Bad(f"{field_key.value} must be a single value")
                fields[str(field_key.value)] = (
                    yaml.safe_load(field_value.value)
                    if (field_value.tag != "tag:yaml.org,2002:str")
                    else field_value.value
                )
            if name in found:
                raise _Bad("defined twice; the first one is kept")
            found[name] = _preset(name, fields, installed)
        except (_Bad, yaml.YAMLError) as err:
            _LOGGER.warning("%s:%d: preset %r skipped: %s", source, line, name, err)
    return found


def preset_files(data_dirs: tuple[Path, ...] | list[Path]) -> list[Path]:
    """The presets files of the data dirs, in their order (the first wins a name)."""
    return [d / PRESETS_FILE for d in data_dirs if (d / PRESETS_FILE).is_file()]


def load_presets(
    data_dirs: tuple[Path, ...] | list[Path], installed: tuple[str, ...]
) -> dict[str, Preset]:
    """Every data dir's presets; a name in an earlier dir wins."""
    presets: dict[str, Preset] = {}
    for path in preset_files(data_dirs):
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_PRESETS_BYTES + 1)
            if len(raw) > MAX_PRESETS_BYTES:
                raise OSError(f"longer than {MAX_PRESETS_BYTES} bytes")
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            _LOGGER.warning("%s: cannot read presets: %s", path, err)
            continue
        for name, preset in parse_presets(text, installed, str(path)).items():
            presets.setdefault(name, preset)
    if presets:
        _LOGGER.info("Presets: %s", ", ".join(presets))
    return presets
