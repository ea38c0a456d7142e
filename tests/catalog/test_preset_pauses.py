"""A preset's own pauses (presets.yaml's sentence_pause and paragraph_pause): read in
whole milliseconds within the option's range, carried by `choose`, and winning over
the server's pauses where a request names the preset."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.audio import LONGEST_PAUSE_MS, Pauses
from wyoming_kokoro.catalog.presets import choose
from wyoming_kokoro.catalog.presets_file import parse_presets

INSTALLED = ("jm_kumo", "jf_alpha")


def one(fields: str) -> str:
    return f"calm:\n  voice: jm_kumo\n{fields}"


def test_a_preset_carries_its_pauses_to_the_choice() -> None:
    presets = parse_presets(
        one("  sentence_pause: 600\n  paragraph_pause: 1500\n"), INSTALLED, "presets.yaml"
    )
    calm = presets["calm"]
    assert (calm.sentence_pause, calm.paragraph_pause) == (600, 1500)
    choice = choose("calm", INSTALLED, presets, 1.0)
    assert (choice.sentence_pause, choice.paragraph_pause) == (600, 1500)
    server = Pauses(300, 900)
    assert server.over(choice.sentence_pause, choice.paragraph_pause) == Pauses(600, 1500)


def test_a_preset_without_pauses_keeps_the_servers() -> None:
    presets = parse_presets(one("  speed: 0.9\n"), INSTALLED, "presets.yaml")
    choice = choose("calm", INSTALLED, presets, 1.0)
    assert (choice.sentence_pause, choice.paragraph_pause) == (None, None)
    assert Pauses(300, 900).over(choice.sentence_pause, choice.paragraph_pause) == Pauses(300, 900)
    plain = choose("jm_kumo", INSTALLED, presets, 1.0)  # a voice has no pauses of its own
    assert (plain.sentence_pause, plain.paragraph_pause) == (None, None)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, LONGEST_PAUSE_MS), st.integers(0, LONGEST_PAUSE_MS))
def test_any_pause_in_range_is_read_as_written(sentence: int, paragraph: int) -> None:
    text = one(f"  sentence_pause: {sentence}\n  paragraph_pause: {paragraph}\n")
    calm = parse_presets(text, INSTALLED, "presets.yaml")["calm"]
    assert (calm.sentence_pause, calm.paragraph_pause) == (sentence, paragraph)


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(["sentence_pause", "paragraph_pause"]),
    st.integers(max_value=-1)
    | st.integers(min_value=LONGEST_PAUSE_MS + 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x))
    | st.sampled_from(["true", "half a second", "'500'", "0.5"]),
)
def test_a_pause_out_of_range_or_not_whole_milliseconds_drops_the_entry(
    key: str, value: Any
) -> None:
    text = one(f"  {key}: {value}\n") + "plain:\n  voice: jf_alpha\n"
    presets = parse_presets(text, INSTALLED, "presets.yaml")
    assert list(presets) == ["plain"]  # the bad entry alone is left out


def test_the_warning_names_the_field_and_the_range(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parse_presets(one("  paragraph_pause: 9000\n"), INSTALLED, "presets.yaml")
        parse_presets(one("  sentence_pause: 0.5\n"), INSTALLED, "presets.yaml")
    first, second = (r.getMessage() for r in caplog.records)
    assert "paragraph_pause must be 0-5000 (milliseconds), got 9000" in first
    assert "sentence_pause must be whole milliseconds" in second
