"""The default voice follows the installed voices on a rescan: chosen again when it
was chosen for the user, kept while installed when the user asked for it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from support.http_client import get_json, http_base, http_server

from wyoming_kokoro.server.offer import Offer

JA = ("jf_alpha", "jm_kumo")
PACK = ("af_heart", "jf_alpha", "jm_kumo")


def test_a_chosen_default_becomes_af_heart_when_it_arrives_and_back_when_it_goes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    offer = Offer(JA, {}, "jm_kumo", False, pinned=False)
    with caplog.at_level(logging.INFO):
        offer.update(PACK, {})
    assert offer.default_voice == "af_heart"
    assert offer.choose(None, 1.0).voice == "af_heart"
    assert "Default voice now af_heart (was jm_kumo)" in caplog.text
    offer.update(JA, {})
    assert offer.default_voice == "jm_kumo"


def test_an_asked_for_default_is_kept_and_replaced_only_while_missing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    offer = Offer(JA, {}, "jf_alpha", False, pinned=True)
    offer.update(PACK, {})
    assert offer.default_voice == "jf_alpha"
    with caplog.at_level(logging.WARNING):
        offer.update(("af_heart", "jm_kumo"), {})
    assert offer.default_voice == "af_heart"
    assert "Voice jf_alpha is not installed now" in caplog.text
    offer.update(PACK, {})
    assert offer.default_voice == "jf_alpha"  # back once it is installed again


def test_without_a_word_on_it_a_default_other_than_the_automatic_one_is_kept() -> None:
    offer = Offer(JA, {}, "jf_alpha", False)
    offer.update(PACK, {})
    assert offer.default_voice == "jf_alpha"


def test_an_asked_for_default_missing_at_start_waits_behind_the_automatic_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        offer = Offer(JA, {}, "af_bella", False, pinned=True)
    assert offer.default_voice == "jm_kumo"
    assert offer.choose(None, 1.0).voice == "jm_kumo"
    assert len(caplog.records) == 1 and "af_bella" in caplog.text
    offer.update((*PACK, "af_bella"), {})
    assert offer.default_voice == "af_bella"  # back once it is installed


@pytest.mark.model  # a real server (no worker is started)
def test_a_server_pinned_to_a_broken_preset_starts_and_takes_it_back_when_mended(
    tmp_path: Path,
) -> None:
    presets = tmp_path / "presets.yaml"
    presets.write_text("narrator:\n  voice: jm_kumoo\n  speed: 0.9\n")
    with http_server("--data-dir", str(tmp_path), "--voice", "narrator") as server:
        voices = http_base(server) + "/v1/audio/voices"
        assert get_json(voices)["default"] == "jm_kumo"
        # the presets file's own warning names the preset; the default's names it once
        said = [line for line in server.log if "Voice narrator cannot be used now" in line]
        assert len(said) == 1 and "WARNING" in said[0], server.log
        presets.write_text("narrator:\n  voice: jm_kumo\n  speed: 0.9\n")
        assert server.wait_for(lambda: get_json(voices)["default"] == "narrator", 30)
