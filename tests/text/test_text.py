"""What is spoken: markdown removal and sentence pieces, whole and streamed."""

from __future__ import annotations

import random
import re

import pysbd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.text.clauses import MAX_PIECE_CHARS, split_long
from wyoming_kokoro.text.long_runs import MAX_RUN
from wyoming_kokoro.text.markdown import LINE_PREFIX, RULE, TABLE_SEP, clean_inline
from wyoming_kokoro.text.pieces import SentenceStream, split_text


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.mark.parametrize(
    ("markdown", "spoken"),
    [
        ("**bold** and *italic* and ***both***", "bold and italic and both"),
        ("a [link text](https://example.com/a_(b)) here", "a link text here"),
        ("![a cat](cat.png) sleeps", "a cat sleeps"),
        ("run `light.turn_on` now", "run light.turn_on now"),
        ("~~old~~ new", "old new"),
        ("keep snake_case_names", "keep snake_case_names"),
        ("Sunny ☀️ and warm 🌡️!", "Sunny and warm !"),
        ("<b>HTML</b> tags", "HTML tags"),
        ("2 * 3 is six", "2 times 3 is six"),
    ],
)
def test_inline_markup_is_removed(markdown: str, spoken: str) -> None:
    assert clean_inline(markdown) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("If a<b and c>d then stop.", "If a<b and c>d then stop."),
        ("When x<y z=2>w it holds.", "When x<y z=2>w it holds."),
        ('Read <my-card data-id=7 title="t">this', "Read this"),
        ("Press <Ctrl> and <Alt> keys.", "Press Ctrl and Alt keys."),
        ("Press <Ctrl><Alt> now.", "Press Ctrl Alt now."),
        ("x < 3 and y > 4", "x < 3 and y > 4"),
        ('A <span class="x">styled</span> word<br/>here', "A styled word here"),
        ("<p>One</p><div id=main>two</div>", "One two"),
        ("<b>bold</b> and <Strong>strong</STRONG>", "bold and strong"),
    ],
)
def test_only_what_is_plausibly_html_is_stripped(text: str, spoken: str) -> None:
    # Any "<...>" went: comparisons lost the words between them, key names vanished.
    assert clean_inline(text) == spoken


@given(
    st.lists(st.sampled_from(["x", "y", "<", ">", " ", "3", "and", "Ctrl", "/", "="]), max_size=30)
)
@settings(max_examples=200, deadline=None)
def test_no_word_is_lost_to_a_comparison(parts: list[str]) -> None:
    # No tag name, no quoted attribute: nothing here is a tag, every word stays.
    text = "".join(parts)
    assert words(clean_inline(text)) == words(text)


def test_structure_becomes_sentences_and_code_is_skipped() -> None:
    text = (
        "# Weather\n"
        "Here is the forecast for today in Berlin:\n"
        "1. Morning: sunny and twelve degrees\n"
        "2. Evening: light rain from the west\n\n"
        "| Day | Temperature |\n|-----|------|\n| Monday | five degrees |\n"
        "```python\nprint('never read aloud')\n```\n"
        "---\n"
        "> Have a nice day, and take an umbrella with you.\n"
    )
    pieces = split_text(text)
    joined = " ".join(pieces)
    assert "print" not in joined and "never read" not in joined
    assert not re.search(r"[#*|`>]", joined)
    assert "Weather. Here is the forecast for today in Berlin:" in pieces[0]
    assert "Morning: sunny and twelve degrees." in joined
    assert "Day, Temperature." in joined and "Monday, five degrees." in joined
    assert pieces[-1].endswith("take an umbrella with you.")


def test_short_sentences_join_a_neighbour() -> None:
    pieces = split_text("Okay. Sure. The kitchen light is now on and dimmed to half.")
    assert pieces == ["Okay. Sure. The kitchen light is now on and dimmed to half."]


def test_abbreviations_and_decimals_do_not_end_sentences() -> None:
    pieces = split_text("Dr. Smith says it is 21.5 degrees today. The window is open now.")
    assert pieces == ["Dr. Smith says it is 21.5 degrees today.", "The window is open now."]


def test_long_sentences_are_cut_at_clauses_without_losing_words() -> None:
    sentence = ", ".join(f"clause number {i} goes here" for i in range(40)) + "."
    pieces = list(split_long(sentence))
    assert len(pieces) > 1
    assert all(len(p) <= MAX_PIECE_CHARS for p in pieces)
    assert words(" ".join(pieces)) == words(sentence)


def test_a_run_without_spaces_is_cut_but_kept() -> None:
    blob = "x" * 1000
    assert "".join(split_long(blob)) == blob


def test_twenty_thousand_characters_keep_every_word() -> None:
    rng = random.Random(7)
    vocab = ["light", "door", "kitchen", "open", "the", "is", "now", "garage", "warm", "Dr."]
    sentences = []
    while sum(len(s) for s in sentences) < 20_000:
        n = rng.randint(2, 40)
        sentences.append(" ".join(rng.choice(vocab) for _ in range(n)) + rng.choice(".!?,;"))
    text = " ".join(sentences)
    assert len(text) >= 20_000
    pieces = split_text(text)
    assert words(" ".join(pieces)) == words(text)
    assert max(len(p) for p in pieces) <= MAX_PIECE_CHARS


@pytest.mark.parametrize("size", [None, 1, 7, 1000])
@pytest.mark.parametrize("run", ["9" * 20_000, "ab" * 5_000, "https://example.com/" + "x" * 9_000])
def test_a_run_too_long_to_listen_to_is_cut_once_before_pieces(run: str, size: int | None) -> None:
    # Cut into pieces first, each piece's run was read as a head of its own: a run of
    # 20,000 nines said some 1,700 of them.
    text = f"The code is {run} and that is all."
    stream = SentenceStream()
    step = size or len(text)
    pieces = [p for i in range(0, len(text), step) for p in stream.feed(text[i : i + step])]
    pieces += stream.finish()
    for said in (pieces, split_text(text)):
        joined = " ".join(said)
        assert len(joined) < MAX_RUN + 60
        assert words(joined)[:3] == ["The", "code", "is"]
        assert words(joined)[-3:] == ["that", "is", "all"]
        assert joined.count("…") == 1


_OPENS = re.compile(r"\s*(?:(`{3,})[^`]*|(~{3,}).*)")
_CLOSES = re.compile(r"\s*(`{3,}|~{3,})\s*")


def _spoken_words(text: str) -> str:
    """The words `text` must be spoken with, from the markdown rules alone (no pysbd):
    code blocks, fence lines, rules and table separators say nothing; a list or
    heading marker at the start of a line is not read. As in CommonMark, a backtick
    fence's info string holds no backtick, a closing fence is fence characters alone
    (as many as the opener's, or more), and a line starting with the run of an inline
    code span still open from the paragraph's earlier lines closes it. A block never
    closed (and not long) is read at the end after all."""
    spoken: list[str] = []
    fence, block, span = "", [], 0
    for line in text.split("\n"):
        if fence:
            closes = _CLOSES.fullmatch(line)
            if closes and closes[1][0] == fence[0] and len(closes[1]) >= len(fence):
                fence = ""
            else:
                block.append(line)
            continue
        opens = _OPENS.fullmatch(line)
        if opens and not (opens[1] and len(opens[1]) == span):
            fence, block, span = opens[1] or opens[2], [line], 0
            continue
        if not (RULE.match(line) or TABLE_SEP.match(line)):
            spoken += words(line if line.lstrip().startswith("|") else LINE_PREFIX.sub("", line))
        for run in re.findall("`+", line):
            span = len(run) if not span else (0 if len(run) == span else span)
        if not line.strip():
            span = 0
    if fence and sum(len(line) + 1 for line in block) <= 2000:
        spoken += [w for line in block for w in words(LINE_PREFIX.sub("", line))]
    return "".join(spoken)


def _said(pieces: list[str]) -> str:
    # "2*3" is read "2 times 3": the only word the pieces may add. Joined, as a stray
    # "*" inside "a*b" or a cut in a run without spaces may change where words part.
    return "".join(w for w in words(" ".join(pieces)) if w != "times")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *"abc de. ,!?\n*#-1`|~",
                *["Dr.", "21.5", "**", "\n\n", "word", "Note: ", "e.g. "],
                *["```", "~~~", "```py", "\n```\n", "\n~~~ x\n"],
            ]
        ),
        max_size=120,
    ).map("".join),
    st.integers(min_value=1, max_value=12),
)
def test_streamed_text_gives_the_same_pieces_as_whole_text(text: str, size: int) -> None:
    stream = SentenceStream()
    streamed: list[str] = []
    for i in range(0, len(text), size):
        streamed += stream.feed(text[i : i + size])
    streamed += stream.finish()
    whole = split_text(text)
    # Both say every word of the input once, in order: not just the same as each other.
    assert _said(whole) == _spoken_words(text)
    assert _said(streamed) == _spoken_words(text)


@pytest.mark.parametrize(
    "text",
    [
        "The door is locked now. ```not a fence\nThe next line is spoken too.\n",
        "# ```Note: not a fence either\nThe next line is spoken too.\n",
        "The door is locked now. | not a table\nThe next line is spoken too.\n",
    ],
)
@pytest.mark.parametrize("size", [1, 5, None])
def test_only_a_line_start_opens_a_code_block(text: str, size: int | None) -> None:
    # What is left of a line after a sentence or a list marker went starts no line:
    # read as a fence, it silenced everything after it.
    stream = SentenceStream()
    step = size or len(text)
    pieces = [p for i in range(0, len(text), step) for p in stream.feed(text[i : i + step])]
    pieces += stream.finish()
    assert _said(pieces) == _spoken_words(text) == _said(split_text(text))


@pytest.mark.parametrize(
    "text",
    [
        "```ls -la``` shows all files.\nThen run it again. The answer is four, and that is all.",
        "Here is the code: ```python\nprint(1)\n```\nThe answer is four. Goodbye.",
        "~~~ wavy line ~~~\nThe answer is four.",
        "Steps:\n```\nls -la\n``` not a close\n```\nThe answer is four, and that is all.",
        "Steps:\n````\nls\n```\nstill code\n````\nThe answer is four, and that is all.",
    ],
)
@pytest.mark.parametrize("size", [1, 4, None])
def test_a_line_that_only_looks_like_a_fence_silences_nothing(text: str, size: int | None) -> None:
    # Any line starting with ``` or ~~~ toggled a code block: what followed was lost.
    stream = SentenceStream()
    step = size or len(text)
    pieces = [p for i in range(0, len(text), step) for p in stream.feed(text[i : i + step])]
    pieces += stream.finish()
    assert _said(pieces) == _spoken_words(text) == _said(split_text(text))
    assert "four" in _said(pieces)
    assert "ls" not in _said(pieces) or "ls -la" in text.split("\n")[0]


def _run_on(size: int) -> str:
    """One long sentence with a colon near its start, as an LLM writes a list on one line."""
    text = "You will need the following: "
    while len(text) < size:
        text += "flour, sugar and eggs, then butter; milk or cream, a pinch of salt, "
    return text[:size]


def _answer(size: int) -> str:
    sentence = (
        "The living room is at twenty one degrees and the kitchen is slightly cooler. "
        "Dr. Smith called at 5 p.m. and asked you to call back tomorrow morning! "
    )
    return (sentence * (size // len(sentence) + 1))[:size]


@pytest.mark.parametrize(
    ("text", "chunk"),
    [
        (_run_on(3_000), 5),  # streamed: each chunk re-segmented the whole line
        (_run_on(20_000), 3),
        (_answer(20_000), 4),
        (_run_on(40_000), None),  # one line, whole: one huge pysbd call
        (_answer(40_000), None),
    ],
    ids=[
        "run-on-3k-streamed",
        "run-on-20k-streamed",
        "answer-20k-streamed",
        "run-on-40k",
        "answer-40k",
    ],
)
def test_the_segmenter_sees_each_character_a_bounded_number_of_times(
    text: str, chunk: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server splits text on its event loop: the work must grow with the new text,
    # never with the line it extends, and pysbd (superlinear) never sees a huge text.
    stream = SentenceStream("en")
    windows: list[int] = []
    segment = pysbd.Segmenter.segment

    def counted(segmenter: pysbd.Segmenter, window: str) -> list[str]:
        windows.append(len(window))
        return segment(segmenter, window)

    monkeypatch.setattr(pysbd.Segmenter, "segment", counted)
    size = chunk or len(text)
    pieces = [p for i in range(0, len(text), size) for p in stream.feed(text[i : i + size])]
    pieces += stream.finish()
    assert sum(windows) <= 4 * len(text)
    assert max(windows) <= 2_500
    assert _said(pieces) == "".join(words(text))
    assert max(len(p) for p in pieces) <= MAX_PIECE_CHARS


def test_pieces_come_out_as_soon_as_they_are_complete() -> None:
    stream = SentenceStream()
    assert stream.feed("The front door is loc") == []
    assert stream.feed("ked. The garage") == ["The front door is locked."]
    assert stream.finish() == ["The garage."]  # the end is a sentence end


def test_only_symbols_say_nothing() -> None:
    assert split_text("... !!! ??? --- ***") == []
    assert split_text("🎉🎉🎉") == []


def test_japanese_and_chinese_sentences_end_without_spaces() -> None:
    text = "玄関のドアが開いています。窓も開いています！本当ですか？はい、確認してください。"
    pieces = split_text(text, "ja")
    # "窓も開いています！" alone is short (9 characters weigh 18 < 24): it takes a neighbour.
    assert [p.replace(" ", "") for p in pieces] == [
        "玄関のドアが開いています。",
        "窓も開いています！本当ですか？",
        "はい、確認してください。",
    ]
    # Streamed in small chunks, a sentence is ready once the next one has begun.
    stream = SentenceStream("ja")
    ready = [p for i in range(0, len(text), 4) for p in stream.feed(text[i : i + 4])]
    assert ready and "".join(ready + stream.finish()).replace(" ", "") == text


def test_japanese_headings_and_list_items_end_with_a_japanese_full_stop() -> None:
    pieces = split_text("**今日の天気**\n- 晴れのち曇り\n- 最高気温は28度", "ja")
    assert "".join(pieces).replace(" ", "") == "今日の天気。晴れのち曇り。最高気温は28度。"


def test_cjk_characters_count_double_and_clauses_cut_at_commas() -> None:
    clause = "東京都の天気は晴れのち曇りでしょう"
    text = "、".join([clause] * 12) + "。"
    pieces = list(split_long(text))
    assert len(pieces) == 2  # 215 characters weigh 430: cut at an 、 in two
    assert all(p.endswith(("、", "。")) for p in pieces)
    assert "".join(pieces).replace(" ", "") == text
    assert list(split_long("你好，世界。")) == ["你好，世界。"]


def test_the_opening_phrase_is_a_piece_before_the_first_sentence_is_complete() -> None:
    # An LLM takes a second or more to write a long first sentence: its opening
    # phrase can be spoken as soon as the next words show where it ends.
    text = "The weather today is sunny and warm with a light breeze from the west. It rains later."
    stream = SentenceStream("en")
    pieces = []
    for i in range(0, len(text), 7):
        got = stream.feed(text[i : i + 7])
        if got:
            pieces.append((i + 7, got))
    pieces.append((len(text), stream.finish()))
    assert pieces[0] == (35, ["The weather today is sunny"])  # long before the full stop
    assert [p for _, got in pieces[1:] for p in got] == [
        "and warm with a light breeze from the west.",
        "It rains later.",
    ]
    # Only the first sentence: later ones wait to be complete, as before.
    assert split_text(text) == [
        "The weather today is sunny and warm with a light breeze from the west.",
        "It rains later.",
    ]


def test_a_text_given_whole_is_spoken_in_whole_sentences() -> None:
    # `synthesize`, the HTTP API and kokoro-say know the whole text: no opening phrase
    # goes ahead (the first call is decoded in windows instead), so no cut costs the
    # sentence its prosody, and no later phrase waits for a call of its own.
    text = (
        "The living room lights are on, the heating is set to twenty one degrees, "
        "and the door is locked."
    )
    assert split_text(text) == [text]
    stream = SentenceStream("en")
    assert stream.feed(text, more=False) == []  # its end is decided by what follows
    assert stream.finish() == [text]
    # Streamed, the writer may take seconds more: the opening phrase goes ahead.
    stream = SentenceStream("en")
    assert stream.feed(text) == ["The living room lights are on,"]


def test_sentences_sent_whole_get_an_opening_phrase_and_lose_no_space() -> None:
    # wyoming-bench and other clients send whole sentences, each with a space after
    # it: the head goes at once, the rest of that sentence follows on its own (not
    # joined to the next sentence, which would take too long to follow the head),
    # and the space after the cut text still separates it from the next chunk.
    stream = SentenceStream("en")
    assert stream.feed("Text to speech is a fascinating field. ") == ["Text to speech"]
    assert stream.feed("Modern models sound natural. ") == ["is a fascinating field."]
    assert stream.finish() == ["Modern models sound natural."]

    stream = SentenceStream("en")
    assert stream.feed("The lamp is on and the doors are shut. ") == ["The lamp is on"]
    assert stream.feed("The heating is on. ") == ["and the doors are shut."]
    assert stream.finish() == ["The heating is on."]


def test_a_cut_before_the_verb_waits_while_a_better_place_can_still_come() -> None:
    stream = SentenceStream("en")
    # "is" could end the subject, but "and" or a comma may follow within reach.
    assert stream.feed("The living room temperature is twenty") == []
    assert stream.feed(" one degrees and the heating") == [
        "The living room temperature is twenty one degrees"
    ]


def test_a_long_rest_after_a_streamed_head_comes_in_phrases() -> None:
    text = (
        "When you get home this evening, the lights in the kitchen and the hall will "
        "turn on by themselves, and the heating will already have warmed the house. "
    )
    stream = SentenceStream("en")
    assert stream.feed(text) == ["When you get home this evening,"]
    rest = stream.feed("Enjoy your dinner. ")
    assert rest[0] == "the lights in the kitchen"
    assert " ".join(rest) + " " == text[len("When you get home this evening, ") :]


def test_a_hindi_sentence_ends_with_its_danda_alone() -> None:
    # A danda (।, ॥) ends a sentence: no '.' is added after it (word times read "है।.").
    assert split_text("आज मौसम अच्छा है। कल बारिश होगी।", "hi") == ["आज मौसम अच्छा है। कल बारिश होगी।"]
    assert split_text("श्लोक समाप्त॥", "hi") == ["श्लोक समाप्त॥"]
