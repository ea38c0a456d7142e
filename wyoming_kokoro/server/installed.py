"""What can be asked for by name: installed voices and presets, and the `info` built
from them. One object shared by the Wyoming and HTTP doors, replaced in place when
the data dirs change (rescan.py), so both see the same voices at once."""

from __future__ import annotations

from collections.abc import Callable

from wyoming.event import Event

from wyoming_kokoro.catalog.presets import Choice, Preset, choose
from wyoming_kokoro.server.wyoming.info import build_info


class Catalog:
    """Voices, presets, the default voice and the `info` event that lists them."""

    def __init__(
        self,
        voice_names: tuple[str, ...],
        presets: dict[str, Preset],
        default_voice: str,
        streaming: bool,
    ) -> None:
        self.default_voice = default_voice
        self._streaming = streaming
        self.voice_names: tuple[str, ...] = ()
        self.presets: dict[str, Preset] = {}
        self.info: Event = Event("info")
        self.refresh: Callable[[], None] = lambda: None  # set by a rescanner
        self.update(voice_names, presets)

    def update(self, voice_names: tuple[str, ...], presets: dict[str, Preset]) -> None:
        self.voice_names = voice_names
        self.presets = presets
        self.info = build_info(voice_names, self._streaming, presets).event()

    @property
    def names(self) -> tuple[str, ...]:
        """Everything a client may name: voices, then presets."""
        return self.voice_names + tuple(self.presets)

    def choose(self, name: str | None, speed: float, lang: str | None = None) -> Choice:
        """The voice, speed, volume and language a name stands for (VoiceError if none)."""
        return choose(name or self.default_voice, self.voice_names, self.presets, speed, lang)
