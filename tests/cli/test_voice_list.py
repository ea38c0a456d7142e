"""kokoro-say --list-voices: the catalog, and each preset with what it sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from kokoro_say.voice_list import list_voices

from wyoming_kokoro.catalog.presets_file import load_presets

INSTALLED = ("jm_kumo", "jf_alpha")


def test_a_presets_pauses_and_silence_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "presets.yaml").write_text(
        "slow:\n  voice: jm_kumo\n  speed: 0.8\n  sentence_pause: 500\n  paragraph_pause: 1200\n"
        "  lead_silence: 400\n"
        "plain:\n  voice: jf_alpha\n",
        encoding="utf-8",
    )
    list_voices(INSTALLED, load_presets([tmp_path], INSTALLED))
    table = capsys.readouterr().out.split("\n\n")[1].splitlines()
    header, rows = table[0].split(), {line.split()[0]: line for line in table[1:]}
    assert header[-5:] == ["pauses", "ms", "silence", "ms", "voice"]
    assert rows["slow"].split()[-3:] == ["500/1200", "400/-", "jm_kumo"]
    # A preset that sets neither shows nothing there, not the options' defaults.
    assert rows["plain"].split()[-1] == "jf_alpha"
    assert "/" not in rows["plain"]
