"""Presets: a file of named voices, each listed as a voice and usable by name."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from support.ha_languages import voices_for
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize
from wyoming.info import Describe, Info

from wyoming_kokoro.catalog.presets import choose
from wyoming_kokoro.catalog.presets_file import load_presets, parse_presets
from wyoming_kokoro.catalog.voices import VoiceError

INSTALLED = ("jm_kumo", "jf_alpha", "af_heart")

GOOD = """\
slow:
  voice: jm_kumo
  speed: 0.7
  description: Kumo, slowly
british blend:
  voice: jf_alpha(1)+jm_kumo(1)
  volume: 1.5
  language: en-gb
"""


def test_presets_are_read_with_their_fields() -> None:
    presets = parse_presets(GOOD, INSTALLED, "presets.yaml")
    assert list(presets) == ["slow", "british blend"]
    slow, blend = presets["slow"], presets["british blend"]
    assert (slow.voice, slow.speed, slow.volume, slow.title) == (
        "jm_kumo",
        0.7,
        1.0,
        "Kumo, slowly",
    )
    assert slow.locales == ["ja_JP", "en_US", "en_GB"]  # as jm_kumo itself
    assert (blend.voice, blend.speed, blend.volume) == ("jf_alpha(0.5)+jm_kumo(0.5)", None, 1.5)
    assert blend.language == "en-gb" and blend.locales == ["en_GB"]


def test_a_bad_entry_is_one_warning_naming_its_line(caplog: pytest.LogCaptureFixture) -> None:
    text = GOOD + "nope:\n  voice: af_nope\nfast:\n  voice: jm_kumo\n  speed: 9\n"
    text += "jm_kumo:\n  voice: jf_alpha\nodd:\n  voice: jm_kumo\n  colour: red\n"
    with caplog.at_level(logging.WARNING):
        presets = parse_presets(text, INSTALLED, "presets.yaml")
    assert list(presets) == ["slow", "british blend"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 4, warnings
    assert warnings[0].startswith("presets.yaml:9: preset 'nope'") and "af_nope" in warnings[0]
    assert warnings[1].startswith("presets.yaml:11: preset 'fast'") and "speed" in warnings[1]
    assert warnings[2].startswith("presets.yaml:14: preset 'jm_kumo'")  # a voice's name
    assert warnings[3].startswith("presets.yaml:16: preset 'odd'") and "colour" in warnings[3]


def test_a_preset_of_voices_not_installed_says_how_to_get_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a default install a preset of upstream voices is skipped with the way to get
    them, and a malformed blend with what is malformed, not as an unknown voice."""
    text = "narrator:\n  voice: af_bella(2)+af_sky(1)\nodd:\n  voice: jm_kumo(2)+\n"
    embedded = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
    with caplog.at_level(logging.WARNING):
        assert parse_presets(text, embedded, "presets.yaml") == {}
    narrator, odd = (r.getMessage() for r in caplog.records)
    assert narrator.endswith(
        "af_bella is one of Kokoro's 54 voices, not installed: run once with --download int8"
    )
    assert odd.endswith("an empty part after a '+'") and "unknown" not in odd
    with pytest.raises(VoiceError, match="af_sky is one of Kokoro's 54 voices, not installed"):
        choose("af_sky", embedded, {}, 1.0)


@pytest.mark.parametrize(
    "text", ["slow: [unclosed", "- a list\n- of things\n", "a: &x [*x]\n", "\0binary"]
)
def test_a_broken_file_loads_nothing_and_says_where(
    text: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_presets(text, INSTALLED, "presets.yaml") == {}
    assert len(caplog.records) <= 1
    assert all(r.getMessage().startswith("presets.yaml") for r in caplog.records)


def test_choose_a_preset_a_voice_or_a_blend() -> None:
    presets = parse_presets(GOOD, INSTALLED, "p")
    slow = choose("slow", INSTALLED, presets, 1.0)
    assert (slow.voice, slow.speed, slow.volume, slow.lang, slow.preset) == (
        "jm_kumo",
        0.7,
        1.0,
        "ja",
        "slow",
    )
    assert choose("british blend", INSTALLED, presets, 1.2).lang == "en-gb"
    assert choose("british blend", INSTALLED, presets, 1.2).speed == 1.2  # the server's
    assert choose("af_heart", INSTALLED, presets, 1.1).speed == 1.1
    with pytest.raises(VoiceError):
        choose("nothing", INSTALLED, presets, 1.0)


def test_the_first_data_dir_wins_a_name(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, speed in ((first, 0.8), (second, 1.5)):
        folder.mkdir()
        (folder / "presets.yaml").write_text(f"slow:\n  voice: jm_kumo\n  speed: {speed}\n")
    assert load_presets([first, second], INSTALLED)["slow"].speed == 0.8


@pytest.fixture(scope="module")
def preset_server(tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("data")
    (data / "presets.yaml").write_text(GOOD + "broken:\n  voice: af_nope\n")
    with ServerProcess("--data-dir", str(data), "--lead-silence", "250") as server:
        yield server


async def _info(uri: str) -> Info:
    from wyoming.client import AsyncClient

    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            assert event is not None
            if Info.is_type(event.type):
                return Info.from_event(event)


def test_presets_are_voices_in_info_and_in_home_assistants_lists(preset_server) -> None:
    assert any("presets.yaml:9: preset 'broken'" in line for line in preset_server.log)
    info = run(_info(preset_server.uri))
    voices = {v.name: v for v in info.tts[0].voices}
    assert voices["slow"].languages == ["ja_JP", "en_US", "en_GB"]
    assert voices["slow"].description == "Kumo, slowly"
    assert voices["british blend"].languages == ["en_GB"]
    assert "broken" not in voices
    assert "slow" in voices_for(info, "en-US") and "slow" in voices_for(info, "ja")
    assert "british blend" in voices_for(info, "en-GB")
    assert "british blend" not in voices_for(info, "en-US")


def test_a_preset_speaks_at_its_speed_after_the_lead_silence(preset_server, listener) -> None:
    text = "The kitchen lights are on."
    plain = run(synthesize(preset_server.uri, text, "jm_kumo"))
    slow = run(synthesize(preset_server.uri, text, "slow"))
    assert not plain.errors and not slow.errors
    lead = 250 * 24 * 2
    first_chunk = next(e.payload for e in slow.events if e.type == "audio-chunk")
    assert first_chunk is not None and first_chunk[:lead] == bytes(lead)  # in the first chunk
    assert any(first_chunk[lead : lead + 4800])  # then speech at once
    ratio = (len(slow.audio) - lead) / (len(plain.audio) - lead)
    assert 1 / 0.7 - 0.15 < ratio < 1 / 0.7 + 0.15, ratio
    listener.check_later(text, slow.audio[lead:], voice="jm_kumo", speed=0.7)
