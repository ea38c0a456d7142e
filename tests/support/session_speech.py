"""A sentence spoken straight on an onnxruntime session (no engine)."""

from __future__ import annotations

import numpy as np

from wyoming_kokoro.catalog.assets import Assets

PHONEMES = "sˈʌmwʌn ɪz æt ðə fɹˈʌnt dˈɔːɹ."  # "Someone is at the front door."


def speak(session, assets: Assets) -> np.ndarray:
    from kokoro_onnx import Kokoro

    kokoro = Kokoro.from_session(session, str(assets.voices))
    audio, _ = kokoro.create(PHONEMES, voice="jm_kumo", is_phonemes=True)
    return audio
