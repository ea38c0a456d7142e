"""What every Wyoming connection shares, and how a request's voice is chosen."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wyoming.event import Event
from wyoming.tts import SynthesizeVoice

from wyoming_kokoro.audio import Pauses
from wyoming_kokoro.catalog.voices import VoiceError
from wyoming_kokoro.server.utterance import HEAD_WAIT_S
from wyoming_kokoro.server.wyoming.wire import Limits

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.presets import Choice
    from wyoming_kokoro.server.offer import Offer

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class HandlerConfig:
    """What every connection shares; built once by the server."""

    info: Event
    voice_names: tuple[str, ...]
    default_voice: str
    speed: float
    max_text_chars: int
    limits: Limits
    idle_seconds: float  # a connection that sends nothing this long is closed
    # On a socket, the end of input during an utterance means the client left (asyncio
    # clients, Home Assistant's too, read eagerly, so their close is a FIN, not a
    # reset). On stdio it is normal: a request piped in ends there.
    eof_is_hang_up: bool = True
    offer: Offer | None = None  # voices and presets; wins over info and voice_names
    volume: float = 1.0  # --volume
    lead_ms: int = 0  # --lead-silence
    tail_ms: int = 0  # --tail-silence
    # --sentence-pause, --paragraph-pause (a preset's win)
    pauses: Pauses = field(default_factory=Pauses)
    phrase_wait: float = HEAD_WAIT_S  # --phrase-wait
    word_events: bool = False  # --word-events

    async def describe(self) -> Event:
        """The current `info` (the data dirs are looked at again, cheaply)."""
        if self.offer is None:
            return self.info
        await self.offer.refresh()
        return self.offer.info

    def choose_strict(self, name: str) -> Choice:
        """A voice, blend or preset by name (VoiceError if none): SSML's <voice>."""
        from wyoming_kokoro.server.offer import Offer

        offer = self.offer or Offer(self.voice_names, {}, self.default_voice, False)
        return offer.choose(name, self.speed)

    def choose(self, voice: SynthesizeVoice | None) -> Choice:
        """The voice, preset, speed and language a request asks for; the default
        voice for a name we do not know (Home Assistant may hold a stale choice)."""
        from wyoming_kokoro.server.offer import Offer

        offer = self.offer or Offer(self.voice_names, {}, self.default_voice, False)
        name = voice.name if voice and voice.name else None
        language = voice.language if voice else None
        try:
            return offer.choose(name, self.speed, language)
        except VoiceError as err:
            _LOGGER.warning("%s; speaking with what is known of the request", err)
        for known_name, known_language in ((name, None), (None, language)):
            try:
                return offer.choose(known_name, self.speed, known_language)
            except VoiceError:
                continue
        return offer.choose(None, self.speed)
