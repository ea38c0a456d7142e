"""Written words matched to the model's phonemes (text/words.py) and placed in an
utterance's time line (timeline.py): no model, only the alignment and the arithmetic."""

from __future__ import annotations

from wyoming_kokoro.text.words import Reading, align, glued, rewritten
from wyoming_kokoro.timeline import Timeline, WordTime


def spans(readings: list[Reading], spoken: str) -> list[tuple[str, str | None]]:
    return [
        (s.word, spoken[s.first : s.last + 1] if s.first is not None else None)
        for s in align(readings, spoken)
    ]


def test_a_written_word_spans_all_the_words_it_is_said_as() -> None:
    readings = [
        Reading("It", "ɪt"),
        Reading("is", "ɪz"),
        Reading("21°C", "twˈɛnti wˈʌn dᵻɡɹˈiːz sˈɛlsɪəs"),
        Reading("now.", "nˈaʊ."),
    ]
    spoken = "ɪt ɪz twˈɛntiwˈʌn dᵻɡɹˈiːz sˈɛlsɪəs nˈaʊ."
    assert spans(readings, spoken) == [
        ("It", "ɪt"),
        ("is", "ɪz"),
        ("21°C", "twˈɛntiwˈʌn dᵻɡɹˈiːz sˈɛlsɪəs"),
        ("now.", "nˈaʊ"),
    ]


def test_a_word_alone_between_found_ones_owns_what_lies_between() -> None:
    # "kg" read alone is two letters; after a number it is "kilograms".
    readings = [
        Reading("2.5", "tˈuː pˈɔɪnt fˈaɪv"),
        Reading("kg", "kˈeɪ dʒˈiː"),
        Reading("left", "lˈɛft"),
    ]
    spoken = "tˈuː pˈɔɪnt fˈaɪv kˈɪləɡɹæmz lˈɛft"
    assert spans(readings, spoken)[1] == ("kg", "kˈɪləɡɹæmz")


def test_words_that_cannot_be_found_say_so_and_have_no_place() -> None:
    readings = [Reading("one", "wˈʌn"), Reading("zorp", "zˈɔːɹp"), Reading("blick", "blˈɪk")]
    spoken = "wˈʌn ɡˈæɹɪdʒ dˈɔːɹ"  # a lexicon said "zorp blick" otherwise
    stretches = align(readings, spoken)
    assert [s.matched for s in stretches] == [True, False, False]
    assert stretches[1].first is None and stretches[2].first is None


def test_words_not_spoken_have_no_place_and_are_no_mismatch() -> None:
    stretches = align(
        [Reading("Hi", "hˈaɪ"), Reading("—", ""), Reading("you", "jˈuː")], "hˈaɪ jˈuː"
    )
    assert (stretches[1].first, stretches[1].matched) == (None, True)


def test_punctuation_goes_with_the_word_before_it() -> None:
    out = glued([Reading("今日", "kʲoː"), Reading("、", ""), Reading("雨", "ame")])
    assert [r.word for r in out] == ["今日、", "雨"]


def test_normalized_words_are_shown_as_written() -> None:
    # Japanese normalization writes "10:30" as 10時30分; OpenJTalk reads numerals.
    words = [
        ("は", "βa"),
        ("十", "ʥɨː"),
        ("時", "ʥi"),
        ("三", "saɴ"),
        ("十", "ʥɨʔ"),
        ("分", "pɯɴ"),
        ("に", "ɲi"),
    ]
    out = rewritten("は10:30に", words, "は10時30分に")
    assert [r.word for r in out] == ["は", "10:30", "に"]
    assert out[1].phonemes.split() == ["ʥɨː", "ʥi", "saɴ", "ʥɨʔ", "pɯɴ"]


def test_a_time_line_places_stretches_and_joins_a_word_cut_between_calls() -> None:
    line = Timeline()
    line.add([WordTime("Hello", 0.1, 0.4)], 0.5)
    assert line.add([WordTime("wonder", 0.0, 0.3, goes_on=True)], 1.0) == []
    line.add([WordTime("wonder", 0.05, 0.2), WordTime("x", None, None, matched=False)], 2.0)
    assert [(w.word, w.start, w.end) for w in line.words] == [
        ("Hello", 0.6, 0.9),
        ("wonder", 1.0, 2.2),
        ("x", None, None),
    ]
    assert line.unmatched == ["x"]


def test_word_times_cross_the_pipe_as_lists() -> None:
    word = WordTime("21°C", 1.25, 2.5, True, False)
    assert WordTime.from_list(word.to_list()) == word
