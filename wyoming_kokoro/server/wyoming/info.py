"""The `info` answer to `describe`, built once from the voices and presets offered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

from wyoming_kokoro import __version__
from wyoming_kokoro.catalog.voices import describe_voice, spoken_locales

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.presets import Preset

_MODEL_ATTRIBUTION = Attribution(name="hexgrad", url="https://huggingface.co/hexgrad/Kokoro-82M")


def build_info(
    voice_names: tuple[str, ...], streaming: bool, presets: Mapping[str, Preset] | None = None
) -> Info:
    """One TTS program with every installed voice under the locales it can speak,
    and every preset as a voice of its own (Home Assistant lists them alike)."""
    voices = [
        TtsVoice(
            name=name,
            description=describe_voice(name).title,
            attribution=_MODEL_ATTRIBUTION,
            installed=True,
            version="1.0",
            languages=spoken_locales(name),
            speakers=None,
        )
        for name in voice_names
    ]
    voices += [
        TtsVoice(
            name=preset.name,
            description=preset.title,
            attribution=_MODEL_ATTRIBUTION,
            installed=True,
            version="1.0",
            languages=preset.locales,
            speakers=None,
        )
        for preset in (presets or {}).values()
    ]
    program = TtsProgram(
        name="kokoro",
        description="Kokoro-82M text to speech (local, offline)",
        attribution=Attribution(name="wyoming-kokoro", url="https://github.com/wyoming-kokoro"),
        installed=True,
        version=__version__,
        voices=voices,
        supports_synthesize_streaming=streaming,
    )
    return Info(tts=[program])
