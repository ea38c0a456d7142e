"""--list-voices: the voice catalog, which voices are installed, and the presets."""

from __future__ import annotations

import click

from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.catalog.voices import CATALOG, describe_voice


def list_voices(installed: tuple[str, ...], presets: dict[str, Preset]) -> None:
    rows = [(v.name, v.language.locale, v.gender, v.grade, v.name in installed) for v in CATALOG]
    rows += [
        (n, describe_voice(n).language.locale, describe_voice(n).gender, "", True)
        for n in installed
        if n not in {v.name for v in CATALOG}
    ]
    click.echo(f"{'name':<16}{'language':<10}{'gender':<8}{'grade':<7}installed")
    for name, locale, gender, grade, have in sorted(rows, key=lambda r: (not r[4], r[0])):
        click.echo(f"{name:<16}{locale:<10}{gender:<8}{grade:<7}{'yes' if have else 'no'}")
    if presets:
        # Pauses (after a sentence / a paragraph) and silence (before / after the
        # speech) in milliseconds; "-" where the preset leaves the option's own.
        click.echo(
            f"\n{'preset':<16}{'languages':<19}{'speed':<7}{'volume':<8}"
            f"{'pauses ms':<11}{'silence ms':<12}voice"
        )
        for preset in presets.values():
            speed = "" if preset.speed is None else f"{preset.speed:g}"
            pauses = _pair(preset.sentence_pause, preset.paragraph_pause)
            silence = _pair(preset.lead_silence, preset.tail_silence)
            click.echo(
                f"{preset.name:<16}{','.join(preset.locales):<19}{speed:<7}"
                f"{preset.volume:<8g}{pauses:<11}{silence:<12}{preset.voice}"
            )


def _pair(first: int | None, second: int | None) -> str:
    if first is None and second is None:
        return ""
    return "/".join("-" if ms is None else str(ms) for ms in (first, second))
