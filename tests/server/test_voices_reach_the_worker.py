"""Voices found by a rescan while a worker is loaded: what the offer names can be
spoken at once, without a voice (the default re-chosen) and by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize, voice_names

from wyoming_kokoro.catalog.assets import embedded_voices

# Starts a real worker: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model

TEXT = "The kitchen lights are on."


def _speaks(server: ServerProcess, voice: str | None) -> None:
    reply = run(synthesize(server.uri, TEXT, voice))
    assert not reply.errors, (voice, reply.errors, "".join(server.log[-20:]))
    samples = np.frombuffer(reply.audio, np.int16).astype(np.float32)
    assert len(samples) > 12_000, voice  # more than half a second
    assert np.sqrt(np.mean(samples**2)) > 300, voice  # speech, not silence


def test_voices_added_while_a_worker_is_loaded_are_spoken_at_once(tmp_path: Path) -> None:
    path = embedded_voices()
    assert path is not None
    with np.load(path) as voices:
        style = voices["jf_alpha"]
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        _speaks(server, None)  # the worker is loaded (idle timeout: minutes)
        np.savez(tmp_path / "pack.npz", af_heart=style, zf_mine=style)
        assert server.wait_for(lambda: "zf_mine" in run(voice_names(server.uri)), 30)
        assert any("Default voice now af_heart" in line for line in server.log)
        _speaks(server, None)  # the new default, as Home Assistant asks
        _speaks(server, "zf_mine")
