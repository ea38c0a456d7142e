"""What can be asked for by name: installed voices and presets, and the `info` built
from them. One object shared by the Wyoming and HTTP doors, replaced in place when
the data dirs change (rescan.py), so both see the same voices at once."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from wyoming.event import Event

from wyoming_kokoro.catalog.presets import Choice, Preset, choose
from wyoming_kokoro.catalog.voices import VoiceError, default_voice
from wyoming_kokoro.server.wyoming.info import build_info

_LOGGER = logging.getLogger(__name__)


class Offer:
    """Voices, presets, the default voice and the `info` event that lists them."""

    def __init__(
        self,
        voice_names: tuple[str, ...],
        presets: dict[str, Preset],
        default_voice: str,
        streaming: bool,
        pinned: bool | None = None,
    ) -> None:
        """`pinned`: the default was asked for (--voice) rather than chosen; None: it
        was asked for when it is not what would have been chosen. One asked for that
        cannot be spoken now is wanted still: the automatic one stands in for it."""
        self.default_voice = default_voice
        if pinned is None:
            pinned = bool(voice_names) and default_voice != _automatic(voice_names)
        self._wanted = default_voice if pinned else None
        self._streaming = streaming
        self.voice_names: tuple[str, ...] = ()
        self.presets: dict[str, Preset] = {}
        self.info: Event = Event("info")
        self.refresh: Callable[[], Awaitable[None]] = _nothing  # set by a rescanner
        self._set(voice_names, presets)
        problem = self._problem(default_voice) if pinned else None
        if problem is not None:
            # Its voices file or preset may come back (a rescan takes it then): a
            # restart must not fail where the running server spoke on.
            self.default_voice = _automatic(voice_names)
            _LOGGER.warning(
                "Voice %s cannot be used now (%s); default voice %s until it can",
                default_voice,
                problem,
                self.default_voice,
            )

    def _set(self, voice_names: tuple[str, ...], presets: dict[str, Preset]) -> None:
        self.voice_names = voice_names
        self.presets = presets
        self.info = build_info(voice_names, self._streaming, presets).event()

    def update(self, voice_names: tuple[str, ...], presets: dict[str, Preset]) -> None:
        """New voices or presets (a rescan); the default voice is chosen again."""
        self._set(voice_names, presets)
        wanted = self._wanted
        if wanted is not None and self._valid(wanted):
            chosen = wanted
        elif voice_names:
            chosen = _automatic(voice_names)
        else:
            return
        if chosen == self.default_voice:
            return
        if wanted is not None and chosen != wanted:
            _LOGGER.warning("Voice %s is not installed now; default voice now %s", wanted, chosen)
        else:
            _LOGGER.info("Default voice now %s (was %s)", chosen, self.default_voice)
        self.default_voice = chosen

    def _valid(self, name: str) -> bool:
        return self._problem(name) is None

    def _problem(self, name: str) -> str | None:
        """Why `name` cannot be spoken now (None: it can)."""
        try:
            choose(name, self.voice_names, self.presets, 1.0)
        except VoiceError as err:
            return str(err)
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """Everything a client may name: voices, then presets."""
        return self.voice_names + tuple(self.presets)

    def choose(self, name: str | None, speed: float, lang: str | None = None) -> Choice:
        """The voice, speed, volume and language a name stands for (VoiceError if none)."""
        return choose(name or self.default_voice, self.voice_names, self.presets, speed, lang)


async def _nothing() -> None:
    return None


def _automatic(voice_names: tuple[str, ...]) -> str:
    return default_voice(voice_names)
