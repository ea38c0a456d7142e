"""Live rescan: files dropped into a data dir appear at the next describe; describes
never start a worker nor keep one alive."""

from __future__ import annotations

import time

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize, voice_names

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model


def test_a_presets_file_dropped_in_appears_at_the_next_describe(tmp_path) -> None:
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        assert "slow" not in run(voice_names(server.uri))
        (tmp_path / "presets.yaml").write_text("slow:\n  voice: jm_kumo\n  speed: 0.8\n")
        assert "slow" in run(voice_names(server.uri))
        (tmp_path / "presets.yaml").write_text("quick:\n  voice: jm_kumo\n  speed: 1.3\n")
        names = run(voice_names(server.uri))
        assert "quick" in names and "slow" not in names
        (tmp_path / "lexicon.txt").write_text("Kokoro  /kˈOkəɹO/\n")
        run(voice_names(server.uri))
        assert server.workers() == []  # no describe started one
        assert any("Presets or lexicon changed" in line for line in server.log)


def test_describes_every_second_do_not_keep_the_worker_alive() -> None:
    with ServerProcess("--idle-timeout", "3") as server:
        assert not run(synthesize(server.uri, "Hello there.")).errors
        assert server.workers()
        started, describes = time.monotonic(), 0
        while server.workers() and time.monotonic() - started < 20:  # a safety bound
            run(voice_names(server.uri))
            describes += 1
            time.sleep(1)
        assert not server.workers(), "the worker outlived its idle timeout"
        # It left for idleness, with describes coming all the while.
        assert any("Idle for 3 s: stopping the worker" in line for line in server.log)
        assert describes >= 2
