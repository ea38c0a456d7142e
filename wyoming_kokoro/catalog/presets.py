"""Presets: named voices with their own speed, volume, language and pauses (`presets.yaml`).

Home Assistant sends only a voice name, never a speed or a volume: a preset is how
its user gets a slower voice, a louder blend or a British reading. Each preset is
offered as a voice of its own (in `info`, `/v1/audio/voices`, `kokoro-say
--list-voices`) and is usable by name wherever a voice is. The files are read by
presets_file.py: a bad entry is one warning naming its line; the others still load.

    # presets.yaml in a data dir
    slow_kumo:
      voice: jm_kumo
      speed: 0.8
      description: Kumo, slowly
    narrator:
      voice: af_bella(2)+af_sky(1)
      volume: 1.2
      language: en-gb
      sentence_pause: 500     # milliseconds after a sentence
      paragraph_pause: 1200   # and between paragraphs
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wyoming_kokoro.catalog.voices import (
    LANGUAGES,
    describe_voice,
    g2p_language,
    parse_voice,
    spoken_locales,
)


@dataclass(frozen=True)
class Preset:
    """One named voice: a voice or blend with its speed, volume and language."""

    name: str
    voice: str  # canonical, as parse_voice prints it
    speed: float | None = None  # None: the server's --speed
    volume: float = 1.0
    language: str | None = None  # a G2P language code; None: the voice's own
    description: str = ""
    sentence_pause: int | None = None  # milliseconds; None: the server's
    paragraph_pause: int | None = None
    lead_silence: int | None = None  # milliseconds before an answer; None: the server's
    tail_silence: int | None = None  # and after it

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
    """What a request's voice name comes to: voice, speed, volume, reading language,
    and a preset's pauses."""

    voice: str
    speed: float
    volume: float
    lang: str
    preset: str | None = None
    sentence_pause: int | None = None  # the preset's own, in milliseconds (None: unset)
    paragraph_pause: int | None = None
    lead_silence: int | None = None  # the preset's own, in milliseconds (None: unset)
    tail_silence: int | None = None


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
            preset.sentence_pause,
            preset.paragraph_pause,
            preset.lead_silence,
            preset.tail_silence,
        )
    spec = parse_voice(name, installed)
    return Choice(str(spec), speed, 1.0, g2p_language(spec, override=lang))
