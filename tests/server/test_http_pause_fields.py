"""The speech request's own pauses (sentence_pause, paragraph_pause) and Kokoro-FastAPI's
normalization_options, checked field by field as the rest of the body is: a value in
range is the request's, a preset's or the server's otherwise; anything else is a 400
naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.audio import LONGEST_PAUSE_MS, Pauses
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.protocol import Piece, decode
from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.request import Voices, parse_speech
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.text.normalizing import Normalization

INSTALLED = ("jm_kumo", "jf_alpha")
CALM = Preset("calm", "jm_kumo", sentence_pause=600, paragraph_pause=1500)
OFFER = Offer(INSTALLED, {"calm": CALM}, "jm_kumo", True)
SERVER = Pauses(300, 900)
VOICES = Voices(INSTALLED, "jm_kumo", 1.0, 1000, offer=OFFER, pauses=SERVER)


def parsed(**fields: Any) -> Any:
    return parse_speech({"input": "Hello there.", **fields}, VOICES)


def refused(**fields: Any) -> ApiError:
    with pytest.raises(ApiError) as raised:
        parsed(**fields)
    assert raised.value.status == 400
    return raised.value


def test_the_servers_pauses_unless_a_preset_or_the_request_says() -> None:
    assert parsed().pauses == SERVER
    assert parsed(sentence_pause=None, paragraph_pause=None).pauses == SERVER
    assert parsed(voice="calm").pauses == Pauses(600, 1500)
    assert parsed(voice="calm", sentence_pause=0).pauses == Pauses(0, 1500)
    assert parsed(paragraph_pause=2000).pauses == Pauses(300, 2000)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, LONGEST_PAUSE_MS), st.integers(0, LONGEST_PAUSE_MS))
def test_any_whole_milliseconds_in_range_are_the_requests(sentence: int, paragraph: int) -> None:
    assert parsed(sentence_pause=sentence, paragraph_pause=float(paragraph)).pauses == Pauses(
        sentence, paragraph
    )


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["sentence_pause", "paragraph_pause"]),
    st.integers(max_value=-1)
    | st.integers(min_value=LONGEST_PAUSE_MS + 1)
    | st.floats(0, LONGEST_PAUSE_MS).filter(lambda x: x != int(x))
    | st.floats(allow_nan=True).filter(lambda x: x != x or abs(x) == float("inf"))
    | st.booleans()
    | st.text(max_size=5)
    | st.lists(st.integers(), max_size=2),
)
def test_anything_else_is_a_400_naming_the_field(key: str, value: Any) -> None:
    error = refused(**{key: value})
    assert error.param == key
    assert key in error.message and "millisecond" in error.message


def test_seconds_written_for_milliseconds_are_refused_in_plain_words() -> None:
    assert "500 for half a second" in refused(sentence_pause=0.5).message


def test_normalization_options_travel_with_the_request() -> None:
    assert parsed().normalization == Normalization()
    request = parsed(normalization_options={"unit_normalization": False, "url_normalization": True})
    assert request.normalization == Normalization(True, ("units",))
    off = parsed(normalization_options={"normalize": False}).normalization
    assert not off.normalize


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"spell_it_out": False}, "normalization_options.spell_it_out"),
        ({"phone_normalization": "no"}, "normalization_options.phone_normalization"),
        ([], "normalization_options"),
    ],
)
def test_bad_normalization_options_are_a_400_naming_the_key(options: Any, param: str) -> None:
    error = refused(normalization_options=options)
    assert error.param == param
    assert "normalization_options" in error.message


def test_the_pause_and_the_switches_cross_the_pipe_to_the_worker() -> None:
    piece = Piece(1, "Hello.", "jm_kumo", sentence_pause=700, normalize_off=["units", "urls"])
    assert decode(piece.event()) == piece
    default = decode(Piece(2, "Hello.", "jm_kumo").event())
    assert isinstance(default, Piece)
    assert (default.sentence_pause, default.normalize, default.normalize_off) == (250, True, [])
