"""The sentence and paragraph pauses, measured in the audio: through a real server's
HTTP door (the request's fields) and through kokoro-say (its options), real model.

A gap is the longest run of quiet 10 ms frames between two sentences' speech. Our
pause is digital silence of exactly the asked length (at speed 1.0); around it the
model's own quiet ends of the words (trimmed to where its audio turns quiet, not cut
into) add a little: about a tenth of a second here, the same at every pause asked.
So a gap is at least the asked pause (less one frame of quantization) and at most
the asked pause plus TAIL_S; the windows of 0.1, 0.5 and 1.0 s do not overlap, and
today's fixed pause (0.25 s, measured 0.35) fits none of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile
from support.http_client import decode, http_base, http_server
from support.server_process import ServerProcess

pytestmark = pytest.mark.model

RATE = 24_000
FRAME = RATE // 100  # 10 ms
QUIET_DB = -50.0  # below any voiced sound of the model, above its trimmed edges
TAIL_S = 0.15  # the quiet end of one word and start of the next, at most
ONE = "The garage door is open now."
TWO = "The kitchen lights are off."


def gaps(audio: np.ndarray) -> list[float]:
    """Every run of quiet frames between the first and last speech, in seconds."""
    frames = audio[: len(audio) // FRAME * FRAME].astype(np.float64).reshape(-1, FRAME) / 32768
    level = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
    loud = np.flatnonzero(level > QUIET_DB)
    assert len(loud), "no speech"
    runs, run = [], 0
    for quiet in level[loud[0] : loud[-1] + 1] <= QUIET_DB:
        if quiet:
            run += 1
        elif run:
            runs.append(run / 100)
            run = 0
    return runs


def longest(audio: np.ndarray, count: int) -> list[float]:
    """The `count` longest gaps, in the order they come."""
    found = gaps(audio)
    keep = sorted(sorted(range(len(found)), key=lambda i: -found[i])[:count])
    return [found[i] for i in keep]


def fits(gap: float, asked_s: float) -> bool:
    return asked_s - 0.01 <= gap <= asked_s + TAIL_S


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with http_server("--idle-timeout", "120") as running:
        yield running


def speak(server: ServerProcess, text: str, **fields: Any) -> np.ndarray:
    body = {"input": text, "voice": "jm_kumo", "response_format": "pcm", **fields}
    request = urllib.request.Request(
        http_base(server) + "/v1/audio/speech",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        return decode(reply.read(), "pcm")


@pytest.mark.parametrize("pause_ms", [100, 500, 1000])
def test_the_gap_between_two_sentences_is_the_asked_pause(
    server: ServerProcess, pause_ms: int
) -> None:
    audio = speak(server, f"{ONE} {TWO}", sentence_pause=pause_ms)
    (gap,) = longest(audio, 1)
    print(f"sentence pause {pause_ms} ms: gap {gap:.2f} s")
    assert fits(gap, pause_ms / 1000), (pause_ms, gap, gaps(audio))


def test_a_blank_line_is_the_paragraph_pause(server: ServerProcess) -> None:
    audio = speak(server, f"{ONE}\n\n{TWO}", sentence_pause=100, paragraph_pause=1000)
    (gap,) = longest(audio, 1)
    print(f"paragraph pause 1000 ms: gap {gap:.2f} s")
    assert fits(gap, 1.0), (gap, gaps(audio))


def test_kokoro_say_places_both_pauses(tmp_path: Path) -> None:
    out = tmp_path / "out.wav"
    text = f"{ONE} {TWO}\n\nThe front door is locked."
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kokoro_say.main",
            "-v",
            "jm_kumo",
            text,
            "-o",
            str(out),
            "-q",
            "--sentence-pause",
            "500",
            "--paragraph-pause",
            "1000",
        ],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(out, dtype="int16")
    assert rate == RATE
    sentence, paragraph = longest(audio, 2)
    print(f"kokoro-say: sentence gap {sentence:.2f} s, paragraph gap {paragraph:.2f} s")
    assert fits(sentence, 0.5) and fits(paragraph, 1.0), gaps(audio)
