"""The sentence and paragraph pauses as text sees them: where a paragraph ends (a blank
line, kept through the piece splitting as a mark), how long the silence placed there
is, and the bounds every door refuses past."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.audio import (
    CLAUSE_PAUSE_MS,
    LONGEST_PAUSE_MS,
    SENTENCE_PAUSE_MS,
    Pauses,
    pause_after,
)
from wyoming_kokoro.settings import SpeechSettings
from wyoming_kokoro.text.pieces import PARAGRAPH, SentenceStream, split_text
from wyoming_kokoro.text.ssml import Pause, parse


def test_a_blank_line_between_paragraphs_is_a_mark_between_their_pieces() -> None:
    text = "The door is open.\n\nThe lights are off. It is late.\n\n\n# Next\nDone."
    assert split_text(text, paragraphs=True) == [
        "The door is open.",
        PARAGRAPH,
        "The lights are off. It is late.",
        PARAGRAPH,
        "Next. Done.",  # a heading ends a piece, not a paragraph: short, it is joined
    ]


def test_no_mark_before_anything_is_said_and_none_unless_asked() -> None:
    assert split_text("\n\n  \nHello there, friend.", paragraphs=True) == ["Hello there, friend."]
    assert PARAGRAPH not in split_text("A first sentence.\n\nA second one here.")


def test_a_short_sentence_ends_its_paragraph_instead_of_joining_the_next() -> None:
    assert split_text("Hi.\n\nThe door is open.", paragraphs=True) == [
        "Hi.",
        PARAGRAPH,
        "The door is open.",
    ]


def test_a_streamed_blank_line_ends_the_paragraph_when_it_is_complete() -> None:
    stream = SentenceStream("en", paragraphs=True)
    out = []
    for chunk in ["The door is op", "en.\n", "\n", "The lights", " are off."]:
        out += stream.feed(chunk)
    out += stream.finish()
    assert out == ["The door is open.", PARAGRAPH, "The lights are off."]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["The door is open.", "Hi.", "# Title", "- item", "```", "x = 1", "", "  ", "Ok"]
        ),
        max_size=12,
    )
)
def test_the_marks_add_nothing_and_take_nothing_from_the_pieces(lines: list[str]) -> None:
    text = "\n".join(lines)
    marked = split_text(text, paragraphs=True)
    assert [p for p in marked if p != PARAGRAPH] == split_text(text)
    # Never first, never two in a row.
    assert not marked or marked[0] != PARAGRAPH
    assert all(not (a == b == PARAGRAPH) for a, b in itertools.pairwise(marked))


def test_the_pause_after_a_piece_follows_the_sentence_pause() -> None:
    assert pause_after("The door is open.") == SENTENCE_PAUSE_MS / 1000
    assert pause_after("The door is open!", 800) == 0.8
    assert pause_after("When the door opens,", 800) == CLAUSE_PAUSE_MS / 1000  # fixed
    assert pause_after("and then", 800) == 0.0


@pytest.mark.parametrize(
    ("pauses", "speed", "added"),
    [
        (Pauses(), 1.0, 0),  # today's: a blank line as long as a sentence end, at any speed
        (Pauses(), 0.5, 0),
        (Pauses(100, 1000), 1.0, 900),  # after a sentence's 100 ms: 1000 in all
        (Pauses(100, 1000), 2.0, 450),  # scaled, as the sentence's own is
        (Pauses(800, 300), 1.0, 0),  # never shorter than a sentence's
    ],
)
def test_a_paragraph_adds_what_its_pause_has_over_a_sentences(
    pauses: Pauses, speed: float, added: int
) -> None:
    assert pauses.after_paragraph(speed) == added
    sentence_end = pause_after("The door is open.", pauses.sentence) * 1000 / speed
    assert sentence_end + added == max(pauses.paragraph, pauses.sentence) / speed


def test_ssml_paragraph_is_the_longer_of_its_own_and_the_paragraph_pause() -> None:
    p = [s for s in parse("<speak><p>One sentence.</p><p>Two.</p></speak>") if isinstance(s, Pause)]
    end = p[0]
    assert end.silence_ms("One sentence.") == 250  # today's, unchanged
    assert end.silence_ms("One sentence,", 0.5) == 250
    assert end.silence_ms("One sentence.", 1.0, Pauses(100, 1500)) == 1400
    assert end.silence_ms("One sentence.", 1.0, Pauses(100, 200)) == 250


def test_a_break_after_a_sentence_is_as_long_as_it_says_whatever_the_sentence_pause() -> None:
    (pause,) = [
        s for s in parse("<speak>One.<break time='700ms'/>Two.</speak>") if isinstance(s, Pause)
    ]
    for sentence in (0, 250, 500):
        own = pause_after("One.", sentence) * 1000
        assert own + pause.silence_ms("One.", 1.0, Pauses(sentence, sentence)) == 700
    assert pause.silence_ms("One.", 1.0, Pauses(1000, 1000)) == 0  # the longer pause stays


@settings(max_examples=60, deadline=None)
@given(st.integers(-10_000, 10_000), st.integers(-10_000, 10_000))
def test_pauses_out_of_range_are_refused_with_a_clear_message(
    sentence: int, paragraph: int
) -> None:
    fits = 0 <= sentence <= LONGEST_PAUSE_MS and 0 <= paragraph <= LONGEST_PAUSE_MS
    if fits:
        assert SpeechSettings(sentence_pause=sentence, paragraph_pause=paragraph).pauses == (
            Pauses(sentence, paragraph)
        )
        return
    with pytest.raises(ValueError, match=r"pause must be 0 to 5000 ms, not -?\d+"):
        SpeechSettings(sentence_pause=sentence, paragraph_pause=paragraph)


@pytest.mark.parametrize("value", [0.5, True, "250", None])
def test_a_pause_is_whole_milliseconds(value: object) -> None:
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        Pauses(sentence=value)  # type: ignore[arg-type]
