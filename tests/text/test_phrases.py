"""Where the first call of an utterance ends: a phrase a speaker could breathe after."""

from __future__ import annotations

import pytest

from wyoming_kokoro.text.phrases import first_phrase, opening_phrases


@pytest.mark.parametrize(
    ("text", "head"),
    [
        # before a conjunction or a preposition, once three words are said
        ("The weather today is sunny and warm with a light breeze.", "The weather today is sunny"),
        ("The quick brown fox jumps over the lazy dog.", "The quick brown fox jumps"),
        ("Here is a quick overview of your home this evening.", "Here is a quick overview"),
        # a two-word sentence of its own
        ("Good morning! It is a little cloudy outside right now.", "Good morning!"),
        # a particle is not a preposition: "are on" stays together
        ("The kitchen lights are on and the door is locked.", "The kitchen lights are on"),
        ("I left your keys in the kitchen drawer.", "I left your keys"),
        # after a clause mark
        ("When you get home tonight, the heating will be on.", "When you get home tonight,"),
        (
            "The washing machine has finished, please empty it soon.",
            "The washing machine has finished,",
        ),
        (
            "Okay, the front door is locked and the porch light is on.",
            "Okay, the front door is locked",
        ),
        # a whole short sentence first, when short ones were joined into one piece
        ("Lights are on. The door is locked and the alarm is set.", "Lights are on."),
        (
            "Text to speech is a fascinating field. Modern models sound natural.",
            "Text to speech is a fascinating field.",
        ),
    ],
)
def test_the_opening_phrase_ends_where_a_speaker_breathes(text: str, head: str) -> None:
    cut = first_phrase(text)
    assert cut is not None and cut[0] == head
    assert f"{cut[0]} {cut[1]}" == text  # nothing lost, nothing added


@pytest.mark.parametrize(
    "text",
    [
        "Someone is at the front door.",  # "at" comes after two words only
        "The front door is locked.",  # no place to breathe
        "Turn on the lights and",  # a one-word tail would be said alone
        "I think it is raining outside.",  # "I think it" is no subject
        "The kids were playing outside all day.",  # two words: too short a subject
        # the predicate would not be ready when the subject has been said: no gap
        "The solar panels have produced eleven kilowatt hours today.",
        "I met Dr. Smith yesterday evening.",  # a title's full stop ends nothing
        "The lights were left on overnight again.",  # "on" is a particle here
        "",
    ],
)
def test_short_or_unbreakable_sentences_stay_whole(text: str) -> None:
    assert first_phrase(text) is None


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("Text to speech is a fascinating field.", "Text to speech"),
        ("The living room temperature is twenty one degrees.", "The living room temperature"),
        ("The garage door is still open right now.", "The garage door"),
    ],
)
def test_failing_other_places_a_long_subject_ends_before_its_verb(text: str, head: str) -> None:
    cut = first_phrase(text)
    assert cut is not None and cut[0] == head
    assert f"{cut[0]} {cut[1]}" == text


def test_a_cut_before_the_verb_needs_the_whole_sentence() -> None:
    # An opening phrase cut off already is not cut again, nor is streamed text.
    assert first_phrase("The garage door has been open") is None
    assert first_phrase("The living room temperature is twenty one degrees and") is None
    assert opening_phrases("The garage door has been open for ten minutes.") == [
        "The garage door has been open",
        "for ten minutes.",
    ]


def test_the_head_never_cuts_an_adjective_from_its_noun() -> None:
    cut = first_phrase("Your new blue electric car is charging in the garage tonight.")
    assert cut == ("Your new blue electric car is charging", "in the garage tonight.")


def test_a_long_rest_is_cut_again_so_it_follows_the_head_without_a_gap() -> None:
    # Said whole, the rest would take the model longer than the head takes to play.
    text = (
        "When you get home this evening, the lights in the kitchen and the hall will "
        "turn on by themselves, and the heating will already have warmed the house."
    )
    parts = opening_phrases(text)
    assert parts[:2] == ["When you get home this evening,", "the lights in the kitchen"]
    assert len(parts[-1]) <= 2 * sum(len(p) for p in parts[:-1])
    assert " ".join(parts) == text
    # A rest no longer than twice the head follows it whole.
    assert opening_phrases("The weather today is sunny and warm with a light breeze.") == [
        "The weather today is sunny",
        "and warm with a light breeze.",
    ]
    assert opening_phrases("Someone is at the front door.") == ["Someone is at the front door."]
