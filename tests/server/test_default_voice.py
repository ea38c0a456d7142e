"""The default voice follows the installed voices on a rescan: chosen again when it
was chosen for the user, kept while installed when the user asked for it."""

from __future__ import annotations

import logging

import pytest

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
