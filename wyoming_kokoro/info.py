"""The `info` answer to `describe`, built once from the voice catalog."""

from __future__ import annotations

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

from . import __version__
from .voices import describe_voice, spoken_locales

_MODEL_ATTRIBUTION = Attribution(name="hexgrad", url="https://huggingface.co/hexgrad/Kokoro-82M")


def build_info(voice_names: tuple[str, ...], streaming: bool) -> Info:
    """One TTS program with every installed voice under the locales it can speak."""
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
