"""Voices files in a data dir, as the server and its worker see them: a user's voices
add to the installed ones (at start-up and dropped in while running), the default
voice stays one that is installed, and a hostile file costs one warning while the
server keeps speaking."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from support.http_client import get_json, http_base, http_server
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize, voice_names

from wyoming_kokoro.catalog.assets import embedded_voices

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model

EMBEDDED = ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]
TEXT = "The kitchen lights are on."


def _real(name: str) -> np.ndarray:
    path = embedded_voices()
    assert path is not None
    with np.load(path) as voices:
        return voices[name]


def _hostile(data: Path) -> list[str]:
    # Made aside and renamed in: a rescan that caught a file half written would warn
    # about that too (a second warning, about another file than the finished one).
    aside = data.with_name(f"{data.name}-aside")
    aside.mkdir()
    np.savez(aside / "pickled.npz", zz_pickle=np.array([{"a": 1}], dtype=object))
    np.savez(aside / "shape.npz", zz_shape=np.zeros((10, 256), np.float32))
    (aside / "junk.npz").write_bytes(os.urandom(4000))
    (aside / "zero.npz").symlink_to("/dev/zero")
    names = ["pickled.npz", "shape.npz", "junk.npz", "zero.npz"]
    for name in names:
        os.replace(aside / name, data / name)
    return names


def _until(server: ServerProcess, listed: bool, name: str) -> list[str]:
    # The rescan resolves new voices files in a thread: they show a describe later.
    seen: list[list[str]] = [[]]

    def done() -> bool:
        seen[0] = run(voice_names(server.uri))
        return (name in seen[0]) == listed

    assert server.wait_for(done, 30), seen[0]
    return seen[0]


def _speaks(server: ServerProcess, voice: str | None) -> bytes:
    reply = run(synthesize(server.uri, TEXT, voice))
    assert not reply.errors, (voice, reply.errors, "".join(server.log[-20:]))
    assert len(reply.audio) > 24000, voice  # more than half a second of speech
    return reply.audio


def _warnings_about(server: ServerProcess, name: str) -> list[str]:
    return [line for line in server.log if name in line and "WARNING" in line]


def test_a_users_voices_add_to_the_installed_ones_and_hostile_files_are_skipped(
    tmp_path: Path,
) -> None:
    np.savez(tmp_path / "my_voice.npz", zf_mine=_real("jf_alpha"))
    bad = _hostile(tmp_path)
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        assert run(voice_names(server.uri)) == [*EMBEDDED, "zf_mine"]
        _speaks(server, None)  # the default voice, as Home Assistant asks
        _speaks(server, "zf_mine")  # the worker loaded the user's voice too
        assert server.workers()
        for name in bad:
            assert len(_warnings_about(server, name)) == 1, (name, server.log)
        assert not any("Traceback" in line for line in server.log), server.log


def test_voices_dropped_in_while_running_add_and_hostile_ones_do_not_stop_speech(
    tmp_path: Path,
) -> None:
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        assert run(voice_names(server.uri)) == EMBEDDED
        bad = _hostile(tmp_path)
        np.savez(tmp_path / "my_voice.npz", zf_mine=_real("jf_alpha"))
        names = _until(server, True, "zf_mine")
        assert names == [*EMBEDDED, "zf_mine"]
        _speaks(server, None)
        _speaks(server, "zf_mine")
        for name in bad:
            assert len(_warnings_about(server, name)) == 1, (name, server.log)
        assert not any("unexpected failure" in line for line in server.log), server.log


def test_the_default_voice_is_chosen_again_when_a_rescan_brings_af_heart(
    tmp_path: Path,
) -> None:
    with http_server("--data-dir", str(tmp_path)) as server:
        base = http_base(server)
        assert get_json(base + "/v1/audio/voices")["default"] == "jm_kumo"
        # The add-on's voice pack arriving after the first start, in small
        np.savez(tmp_path / "pack.npz", af_heart=_real("jf_alpha"))
        _until(server, True, "af_heart")
        assert get_json(base + "/v1/audio/voices")["default"] == "af_heart"
        assert any("Default voice now af_heart" in line for line in server.log), server.log
        _speaks(server, None)
        # Gone again: the default goes back to one that is installed
        (tmp_path / "pack.npz").unlink()
        _until(server, False, "af_heart")
        assert get_json(base + "/v1/audio/voices")["default"] == "jm_kumo"
        _speaks(server, None)


def test_a_voice_chosen_with_voice_stays_the_default_while_installed(tmp_path: Path) -> None:
    with http_server("--data-dir", str(tmp_path), "--voice", "jf_nezumi") as server:
        base = http_base(server)
        np.savez(tmp_path / "pack.npz", af_heart=_real("jf_alpha"))
        _until(server, True, "af_heart")
        assert get_json(base + "/v1/audio/voices")["default"] == "jf_nezumi"
