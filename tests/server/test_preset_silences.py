"""A preset's own silence before and after an answer (lead_silence, tail_silence in
presets.yaml, saved from the page too) wins over the server's, at both doors."""

from __future__ import annotations

import asyncio

from support.fake_door import fake_door
from support.wyoming_io import synthesize

from wyoming_kokoro.audio import SAMPLE_RATE
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.server.http.request import Voices, parse_speech
from wyoming_kokoro.server.offer import Offer

BYTES_PER_MS = SAMPLE_RATE * 2 // 1000
LATE = Preset("late", "jm_kumo", lead_silence=300, tail_silence=120)
PLAIN = Preset("plain", "jm_kumo")


def zeros_around(audio: bytes) -> tuple[int, int]:
    """The silent bytes before the first sound and after the last."""
    head = len(audio) - len(audio.lstrip(b"\0"))
    tail = len(audio) - len(audio.rstrip(b"\0"))
    return head, tail


def test_a_presets_silences_frame_its_wyoming_answer() -> None:
    async def main() -> list[bytes]:
        async with fake_door(presets={"late": LATE, "plain": PLAIN}) as door:
            late = await synthesize(door.uri, "Good night.", voice="late", timeout=30)
            plain = await synthesize(door.uri, "Good night.", voice="plain", timeout=30)
            return [late.audio, plain.audio]

    late, plain = asyncio.run(main())
    assert zeros_around(late) == (300 * BYTES_PER_MS, 120 * BYTES_PER_MS)
    assert zeros_around(plain) == (0, 0)  # the server's (none here)


def test_a_presets_silences_go_with_its_http_request() -> None:
    offer = Offer(("jm_kumo",), {"late": LATE, "plain": PLAIN}, "jm_kumo", False)
    voices = Voices(("jm_kumo",), "jm_kumo", 1.0, 1000, offer=offer, lead_ms=50, tail_ms=60)
    late = parse_speech({"input": "Hi.", "voice": "late"}, voices)
    plain = parse_speech({"input": "Hi.", "voice": "plain"}, voices)
    assert (late.lead_ms, late.tail_ms) == (300, 120)
    assert (plain.lead_ms, plain.tail_ms) == (None, None)  # the server's: 50 and 60
