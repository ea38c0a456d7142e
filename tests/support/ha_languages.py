"""How Home Assistant finds voices for a pipeline language in a Wyoming `info`.

A re-statement of two pieces of Home Assistant (not its code): the Wyoming TTS
entity groups the installed voices of the first installed program by every entry
of their `languages`; the pipeline then keeps the supported languages that match
its own (`homeassistant.util.language.matches`: tags split at "-" or "_", the
language part must be equal, an equal region ranks first) and offers the voices
of the best match. "jp" never matches "ja"; "ja" matches "ja_JP" and "ja-JP".
"""

from __future__ import annotations

import re
from collections import defaultdict

from wyoming.info import Info

_SEPARATOR = re.compile(r"[-_]")


def _parse(tag: str) -> tuple[str, str | None]:
    parts = _SEPARATOR.split(tag)
    return parts[0].lower(), parts[1].upper() if len(parts) > 1 else None


def matches(target: str, supported: list[str]) -> list[str]:
    """Supported languages that serve `target`, best first (exact region first)."""
    language, region = _parse(target)
    found = [s for s in supported if _parse(s)[0] == language]
    return sorted(found, key=lambda s: (region is None or _parse(s)[1] != region, s))


def voices_for(info: Info, pipeline_language: str) -> list[str]:
    """Voice names Home Assistant offers a pipeline in this language ([] = greyed out)."""
    program = next(p for p in info.tts if p.installed)
    by_language: dict[str, list[str]] = defaultdict(list)
    for voice in program.voices:
        if voice.installed:
            for language in voice.languages:
                by_language[language].append(voice.name)
    best = matches(pipeline_language, list(by_language))
    return by_language[best[0]] if best else []
