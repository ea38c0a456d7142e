"""Kokoro-FastAPI's normalization_options: read into our switches, and each switch
turns off, for the piece being planned, exactly the rewriting it names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.text.normalize import en, ja, normalize, other, zh
from wyoming_kokoro.text.normalize.passes import SWITCHED, switched_off
from wyoming_kokoro.text.normalizing import (
    KOKORO_FASTAPI,
    SWITCHES,
    Normalization,
    NormalizationError,
    from_options,
)

OPTIONS = sorted(KOKORO_FASTAPI)


def test_none_and_an_empty_object_keep_the_normalizer_as_it_is() -> None:
    assert from_options(None) == Normalization() == from_options({})
    assert Normalization().normalize and Normalization().off == ()


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(OPTIONS), st.none() | st.booleans()))
def test_each_false_option_turns_its_switch_off_and_nothing_else(
    options: dict[str, bool | None],
) -> None:
    read = from_options(options)
    wanted = {KOKORO_FASTAPI[k] for k, v in options.items() if v is False} - {None}
    assert set(read.off) == wanted
    assert list(read.off) == [s for s in SWITCHES if s in wanted]  # one order, always
    assert read.normalize == (options.get("normalize") is not False)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda k: k not in KOKORO_FASTAPI))
def test_an_unknown_option_is_refused_naming_it(key: str) -> None:
    with pytest.raises(NormalizationError) as raised:
        from_options({"normalize": True, key: False})
    assert raised.value.key == key
    assert f"no option '{key[:40]}'" in str(raised.value)


@pytest.mark.parametrize("value", [0, 1, "false", [], {}, 0.0])
def test_a_value_that_is_not_true_false_or_null_is_refused(value: Any) -> None:
    with pytest.raises(NormalizationError, match="must be true or false") as raised:
        from_options({"url_normalization": value})
    assert raised.value.key == "url_normalization"


@pytest.mark.parametrize("options", [[], "normalize", 1, True])
def test_options_that_are_not_an_object_are_refused(options: Any) -> None:
    with pytest.raises(NormalizationError, match="must be an object"):
        from_options(options)


def test_every_switch_names_passes_a_normalizer_has() -> None:
    assert set(SWITCHED) == set(SWITCHES)
    names = {name for module in (en, other, ja, zh) for name, _ in module._PASSES}
    for switch, passes in SWITCHED.items():
        assert passes and set(passes) <= names, (switch, set(passes) - names)


def said(text: str, *off: str, lang: str = "en-us") -> str:
    with switched_off(off):
        return normalize(text, lang)


def test_units_off_leaves_units_but_money_is_still_read() -> None:
    assert said("It is 5 km away.") == "It is five kilometers away."
    assert said("It is 5 km away.", "units") == "It is five km away."
    # Kokoro-FastAPI's unit switch leaves money to its money rules: so do we.
    assert said("It costs $5.", "units") == said("It costs $5.") == "It costs five dollars."


def test_urls_off_leaves_web_addresses_unread() -> None:
    text = "See https://example.com/docs or example.org today."
    assert "example dot com slash docs" in said(text)
    assert "example dot org" in said(text)
    off = said(text, "urls")
    assert "dot" not in off and "example.org" in off and "https://example.com" in off
    assert "dot com" in said("Write to bob@example.com now.", "urls")  # an e-mail's own


def test_emails_off_leaves_an_address_unread() -> None:
    assert said("Write to bob@example.com now.") == "Write to bob at example dot com now."
    off = said("Write to bob@example.com now.", "emails")
    assert "example.com" in off and "dot" not in off
    assert "example dot org" in said("Visit example.org now.", "emails")  # a domain's own


def test_phones_off_reads_a_phone_number_as_numbers() -> None:
    assert said("Call 555-123-4567 now.").startswith("Call five five five, one two three")
    off = said("Call 555-123-4567 now.", "phones")
    assert "five five five" not in off and "hundred" in off


def test_symbols_off_leaves_symbols_as_written() -> None:
    assert said("Tom & Jerry, a + b = c") == "Tom and Jerry, a plus b equals c"
    assert said("Tom & Jerry, a + b = c", "symbols") == "Tom & Jerry, a + b = c"
    assert "&" in said("Tom & Jerry", "symbols", lang="es")


def test_a_switch_holds_only_within_its_block() -> None:
    with switched_off(["units"]):
        assert "km" in normalize("5 km")
    assert "kilometers" in normalize("5 km")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=60), st.sets(st.sampled_from(SWITCHES)))
def test_any_text_with_any_switches_is_normalized_without_a_failure(
    text: str, off: set[str]
) -> None:
    assert isinstance(said(text, *off), str)


def test_the_planner_reads_a_piece_with_its_requests_switches_and_sentence_pause() -> None:
    from kokoro_onnx.tokenizer import Tokenizer

    from wyoming_kokoro.catalog.voices import VoiceSpec
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.planner import Planner

    planner = Planner(EngineSettings(), Tokenizer(), {}, windows=False)
    voice = VoiceSpec((("af_heart", 1.0),))

    def said(piece: str, how: Normalization | None = None) -> str:
        return " ".join(call.phonemes for call in planner.plan(piece, voice, normalization=how))

    piece, units_only = "It is 5 km away.", Normalization(True, ("units",))
    units_off = said(piece, units_only)
    assert units_off == said("It is five km away.") != said(piece)
    year = "It was in 1984."  # read as a year only by the normalizer
    assert said(year, Normalization(False, ("units",))) != said(year) == said(year, units_only)
    assert said(piece) == said("It is five kilometers away.")  # the switch held for its piece
    calls = planner.plan("The door is open.", voice, sentence_pause=700)
    assert calls[-1].pause == 0.7
    assert planner.plan("The door is open.", voice, 2.0, sentence_pause=700)[-1].pause == 0.35


def test_a_sentence_pause_longer_than_the_models_own_ends_each_sentences_call() -> None:
    # Sentences joined in one call get the model's own short pause between them: a
    # longer --sentence-pause (or a preset's) needs each sentence to end a call.
    from kokoro_onnx.tokenizer import Tokenizer

    from wyoming_kokoro.audio import SENTENCE_PAUSE_MS
    from wyoming_kokoro.catalog.voices import VoiceSpec
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.planner import Planner

    planner = Planner(EngineSettings(), Tokenizer(), {}, windows=False)
    voice = VoiceSpec((("af_heart", 1.0),))
    piece = "The fan is off. The tap is dry, and the door is open."
    joined = planner.plan(piece, voice)
    apart = planner.plan(piece, voice, sentence_pause=900)
    assert len(joined) == 1 and joined[0].pause == SENTENCE_PAUSE_MS / 1000
    assert [call.pause for call in apart] == [0.9, 0.9]
    assert " ".join(c.phonemes for c in apart) == joined[0].phonemes  # nothing lost
    # A shorter pause keeps the sentences together: the model's own is about as short.
    assert len(planner.plan(piece, voice, sentence_pause=100)) == 1
