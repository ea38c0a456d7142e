"""A total text path: pieces → normalization → G2P never raises, for any text in any
supported language; a pass that still fails costs only itself (issue 55)."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.written_forms import LANGUAGES, OTHER_DIGITS, TEXT, numeric_sentences, sentences

from wyoming_kokoro.text import normalize as normalizer
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.normalize import en, ja, normalize, other
from wyoming_kokoro.text.normalize.runs import MAX_RUN, RUN_HEAD, ascii_digits, bound_runs
from wyoming_kokoro.text.pieces import SentenceStream, split_text

# Examples per property in the fast tier (a few seconds in all), and in the full suite.
FAST = 40
FULL = 2000
# Normalization alone is cheap: the ordinary numeric forms that once failed one answer
# in a hundred or so (decimal ranges) get enough examples to be found in the fast tier.
NUMERIC = 300
LANGUAGE = st.sampled_from(LANGUAGES)


class Warnings(logging.Handler):
    """Warnings logged by the text path: a contained failure is still a failure here."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def no_warnings(*names: str) -> Iterator[Warnings]:
    caught = Warnings()
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addHandler(caught)
    try:
        yield caught
    finally:
        for logger in loggers:
            logger.removeHandler(caught)
    assert not caught.records, [r.getMessage() for r in caught.records]


@pytest.fixture(scope="module")
def phonemize() -> Phonemizer:
    from kokoro_onnx.tokenizer import Tokenizer

    return Phonemizer(Tokenizer().phonemize)


def read(text: str, lang: str) -> list[str]:
    """What the worker does with a text before the G2P: pieces, each normalized."""
    with no_warnings("wyoming_kokoro.text.normalize", "wyoming_kokoro.synthesis.planner"):
        pieces = split_text(text, lang.split("-")[0])
        return [normalize(piece, lang) for piece in pieces]


def check_total(text: str, lang: str, phonemize: Phonemizer | None = None) -> None:
    # Normalization may lengthen a run (Italian says 5364 in one word): runs.py bounds
    # what is written, the tests of the bound below check that.
    for piece in read(text, lang):
        if phonemize is not None:
            phonemize(piece, lang)


# --- the properties: fast tier --------------------------------------------------------


@settings(max_examples=FAST, deadline=None)
@given(text=TEXT, lang=LANGUAGE)
def test_any_text_is_read_in_pieces_without_raising(text: str, lang: str) -> None:
    check_total(text, lang)


@settings(max_examples=NUMERIC, deadline=None)
@given(text=numeric_sentences(), lang=LANGUAGE)
def test_ordinary_numeric_forms_are_read_without_raising(text: str, lang: str) -> None:
    check_total(text, lang)


@settings(max_examples=FAST, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=sentences(max_forms=4), lang=LANGUAGE)
def test_written_forms_reach_phonemes_without_raising(phonemize, text: str, lang: str) -> None:
    check_total(text, lang, phonemize)


@settings(max_examples=FAST, deadline=None)
@given(chunks=st.lists(TEXT, min_size=1, max_size=4), lang=LANGUAGE)
def test_streamed_text_is_read_in_pieces_without_raising(chunks: list[str], lang: str) -> None:
    stream = SentenceStream(lang.split("-")[0])
    pieces = [p for chunk in chunks for p in stream.feed(chunk)] + stream.finish()
    for piece in pieces:
        normalize(piece, lang)


# --- the same, longer: the full suite only ----------------------------------------------


@pytest.mark.slow
@settings(max_examples=FULL, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.one_of(TEXT, st.text(max_size=400)), lang=LANGUAGE)
def test_any_text_reaches_phonemes_without_raising_at_length(
    phonemize, text: str, lang: str
) -> None:
    check_total(text, lang, phonemize)


# --- the defects of issue 55 ----------------------------------------------------------


@pytest.mark.parametrize("lang", ["en-us", "en-gb", "ja"])
@pytest.mark.parametrize(
    "text", ["Prices are 1.25-1.50 each.", "Open 1.50-2.00 pm.", "2.46 - 6.49", "1.25–1.50"]
)
def test_a_decimal_range_is_read(text: str, lang: str) -> None:
    with no_warnings("wyoming_kokoro.text.normalize"):
        said = normalize(text, lang)
    assert not re.search(r"\d", said) and " to " in said, said


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("three", list("٣۳๓३৩༣၃３𝟑"))  # Arabic-Indic, Persian, Thai, ...
def test_every_scripts_digits_are_read_as_digits(lang: str, three: str) -> None:
    lead = {"ja": "気温は", "zh": "温度是"}.get(lang, "It is ")
    said = normalize(f"{lead}{three}{three}.{three} now", lang)
    assert said == normalize(f"{lead}33.3 now", lang)


@settings(max_examples=FAST, deadline=None)
@given(digit=OTHER_DIGITS, lang=LANGUAGE)
def test_any_digit_in_japanese_text_reaches_phonemes(phonemize, digit: str, lang: str) -> None:
    # The Japanese G2P asserted that no word was a digit: 価格は٣円 raised AssertionError.
    for text in (f"価格は{digit}円", f"{digit}{digit}人", f"温度是{digit}度"):
        phonemize(normalize(text, lang), lang)
        phonemize(text, "ja")  # unnormalized (--no-normalize)


def test_the_japanese_g2p_reads_arabic_indic_digits(phonemize) -> None:
    assert phonemize("価格は٣円", "ja") == phonemize("価格は3円", "ja")


@pytest.mark.parametrize("lang", [*LANGUAGES, "de", "ko"])
@pytest.mark.parametrize(
    "run",
    ["x" * 20_000, "7" * 20_000, "aGVsbG8gd29ybGQ=" * 1_250, "https://x.io/" + "a/" * 10_000],
    ids=["letters", "digits", "base64", "url"],
)
def test_a_run_too_long_to_listen_to_is_cut(lang: str, run: str) -> None:
    said = normalize(f"Here it is: {run} done.", lang)
    assert said.endswith("done.") and len(said) < 600, said[:600]
    head = "https://x.io " if run.startswith("https") else run[:RUN_HEAD]  # a link: its host
    assert bound_runs(run).startswith(head)


@pytest.mark.parametrize("length", [MAX_RUN - 1, MAX_RUN])
def test_a_run_within_the_bound_is_read_whole(length: int) -> None:
    run = "ab" * (length // 2) + "c" * (length % 2)
    assert bound_runs(f"a {run} b") == f"a {run} b"


@pytest.mark.parametrize("scheme", ["https://", "http://", ""])
def test_a_long_link_is_read_up_to_its_host(scheme: str) -> None:
    """A long link's host is what a listener can use: kept, and read by the URL pass."""
    link = f"{scheme}www.home-assistant.io/integrations/wyoming/" + "a/b" * 40 + "?q=1"
    assert len(link) > MAX_RUN
    said = normalize(f"See {link} for details.", "en-us")
    assert "home assistant dot io" in said and said.endswith("for details."), said


# --- containment: a failing pass costs only itself ------------------------------------


def boom(text: str, *args: object) -> str:
    raise RuntimeError("a bug")


@pytest.mark.parametrize(
    ("module", "name", "lang", "text", "read"),
    [
        (en, "money", "en-us", "It costs $3.99 and it is 21.5 °C.", "twenty-one point"),
        (other, "quantities", "es", "Cuesta 3,99 € y hace 21,5 °C.", "tres euros"),
        (ja, "clock times", "ja", "10:30に価格は¥1,500です。", "1,500円"),
    ],
)
def test_a_failing_pass_is_skipped_for_the_piece_with_one_warning(
    monkeypatch, caplog, module, name: str, lang: str, text: str, read: str
) -> None:
    passes = [(n, boom if n == name else apply) for n, apply in module._PASSES]
    assert len(passes) > 1 and any(n == name for n, _ in passes)
    monkeypatch.setattr(module, "_PASSES", tuple(passes))
    with caplog.at_level(logging.WARNING):
        said = normalize(text, lang)
    assert read in said, said  # the other passes read the piece as usual
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and name in warnings[0].getMessage(), warnings


def test_a_failing_normalizer_leaves_the_piece_as_written(monkeypatch, caplog) -> None:
    monkeypatch.setattr(normalizer, "normalize_text", boom)
    with caplog.at_level(logging.WARNING):
        said = normalize("It is 21.5 °C and " + "z" * 5_000, "en-us")
    assert said.startswith("It is 21.5 °C and " + "z" * RUN_HEAD) and len(said) < 100
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


def test_cheap_ascii_digits_leave_ascii_text_alone() -> None:
    text = "".join(chr(c) for c in range(128))
    assert ascii_digits(text) == text
    assert all(unicodedata.decimal(c) == int(ascii_digits(c)) for c in "٠١٢٣٤٥٦٧٨٩")


def test_the_planner_says_a_piece_its_text_path_fails_on(monkeypatch, caplog) -> None:
    from kokoro_onnx.tokenizer import Tokenizer

    from wyoming_kokoro.catalog.voices import VoiceSpec
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.planner import Planner

    planner = Planner(EngineSettings(), Tokenizer(), {}, windows=False)
    voice, piece = VoiceSpec((("af_heart", 1.0),)), "The door is open."
    said = [call.phonemes for call in planner.plan(piece, voice)]
    # The normalized text fails the G2P (a bug): the piece is read as written, and its
    # words, which could not be found, have no times.
    monkeypatch.setattr(Planner, "phonemes", boom)
    with caplog.at_level(logging.WARNING):
        calls = planner.plan(piece, voice, words=True)
    assert [call.phonemes for call in calls] == said
    assert all(call.words == () for call in calls)
    assert any("read as written" in r.getMessage() for r in caplog.records)
    # Nothing reads it: the piece is left unsaid, and nothing is raised.
    monkeypatch.setattr(planner, "_phonemize", boom)
    assert planner.plan(piece, voice, words=True) == []


@pytest.mark.parametrize("normalized", [True, False])
def test_the_planner_cuts_a_run_too_long_to_listen_to(normalized: bool) -> None:
    # --no-normalize reads text as written, but a 20,000-character "word" was spoken
    # for minutes whatever the flag.
    from kokoro_onnx.tokenizer import Tokenizer

    from wyoming_kokoro.catalog.voices import VoiceSpec
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.planner import Planner

    planner = Planner(EngineSettings(normalize=normalized), Tokenizer(), {}, windows=False)
    calls = planner.plan(
        "Here: " + "aGVsbG8gd29ybGQ=" * 1_250 + " done.", VoiceSpec((("af_heart", 1.0),))
    )
    assert 0 < sum(len(call.phonemes) for call in calls) < 300
