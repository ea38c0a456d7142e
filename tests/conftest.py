"""Shared test tools: an offline speech recognizer, the real engine, a real server."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import numpy as np
import pytest
from server_process import ServerProcess  # tests import it from here


class Recognizer:
    """pocketsphinx with the US-English model inside its wheel: a harsh, honest ear."""

    def __init__(self) -> None:
        from pocketsphinx import Decoder

        self._decoder = Decoder(samprate=16000, loglevel="FATAL")

    def transcribe(self, pcm: bytes | np.ndarray, rate: int = 24000) -> str:
        import soxr

        samples = np.frombuffer(pcm, dtype=np.int16) if isinstance(pcm, bytes) else pcm
        audio = samples.astype(np.float32) / 32768.0
        pad = np.zeros(rate // 4, dtype=np.float32)  # the recognizer needs a lead-in
        audio = soxr.resample(np.concatenate([pad, audio, pad]), rate, 16000)
        data = (np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes()
        self._decoder.start_utt()
        self._decoder.process_raw(data, full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp else ""


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: edit distance over the reference's word count."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        prev, row[0] = row[:], i
        for j in range(1, len(hyp) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ref[i - 1] != hyp[j - 1]))
    return row[len(hyp)] / max(1, len(ref))


@pytest.fixture(scope="session")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.fixture(scope="session")
def engine():
    from wyoming_kokoro.engine import Engine
    from wyoming_kokoro.models.assets import resolve

    loaded = Engine(resolve(None, None, []))
    loaded.warm_up()
    return loaded


def can_mount_privately() -> bool:
    """Can tests mount (tmpfs, read-only binds) in a user+mount namespace of their own?"""
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """One server shared by a test module; its worker stays loaded between tests."""
    with ServerProcess("--idle-timeout", "120") as running:
        yield running
