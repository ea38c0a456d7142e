"""espeak-ng never sees the text that crashes it (text/g2p/espeak_guard.py).

espeak-ng segfaults on a `-` after a symbol and before a letter at a clause's start
("'-आज"), which kills the process that phonemizes: the worker and every client it
serves. So the phonemizer runs here in a process of its own, fed one text at a time,
and a crash is seen as that process dying; it is started again for the next text.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.text.g2p.espeak_guard import hyphen_before, joins_words, safe_for_espeak, script

LANGUAGES = ("en-us", "en-gb", "es", "fr-fr", "it", "pt-br", "hi")

# Reads [how, lang, text] lines; answers "ok" for each, or dies with espeak-ng.
_CHILD = """
import json, sys
from kokoro_onnx.tokenizer import Tokenizer
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.normalize import normalize
from wyoming_kokoro.text.words import readings
phonemize = Phonemizer(Tokenizer().phonemize)
said = lambda text, lang: phonemize(normalize(text, lang), lang)
print("ready", flush=True)
for line in sys.stdin:
    how, lang, text = json.loads(line)
    if how == "phonemes":
        phonemize(text, lang)
    elif how == "written":
        said(text, lang)
    else:
        readings(text, lang, said, phonemize)
    print("ok", flush=True)
"""


class Phonemizing:
    """The real phonemizer (kokoro-onnx's espeak-ng behind ours) in a child process."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            assert self._child.stdout is not None
            assert self._child.stdout.readline().strip() == "ready"
        return self._child

    def survives(self, text: str, lang: str, how: str = "phonemes") -> bool:
        """Whether phonemizing `text` left the process alive (a crash kills it)."""
        child = self._started()
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps([how, lang, text]) + "\n")
        child.stdin.flush()
        if child.stdout.readline().strip() == "ok":
            return True
        child.wait(timeout=30)
        return False

    def close(self) -> None:
        if self._child is not None and self._child.poll() is None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            self._child.wait(timeout=30)


@pytest.fixture(scope="module")
def phonemizing():
    process = Phonemizing()
    yield process
    process.close()


# Each crashed espeak-ng 1.52 through kokoro-onnx's phonemizer, alone in a fresh process.
CRASHERS = (
    [("'-आज", lang, "phonemes") for lang in LANGUAGES]
    + [
        ("″-नमस्कार", "hi", "phonemes"),
        ("दाम: ₹-5", "hi", "written"),  # the digits become Devanagari words: "₹-पाँच"
        ("₹-आज", "hi", "phonemes"),
        ("'-中", "hi", "phonemes"),  # Hindi with a CJK character
        ("，-COVID-19", "hi", "written"),
        ("hello. '-आज", "en-us", "phonemes"),  # a clause's start, not only the text's
        ("५-आज", "es", "phonemes"),
        ("‐-कोविड", "en-us", "phonemes"),
        ("\u200d-आज", "en-us", "phonemes"),
        ("---लच्छेद", "hi", "phonemes"),
        ("）-ाच", "pt-br", "phonemes"),
        ("\u0301\u0301-आज", "en-us", "phonemes"),  # accents on nothing
        ("x\u0301-आज", "pt-br", "phonemes"),  # an accent espeak has no letter for
        ("\u0301e-आज", "fr-fr", "phonemes"),  # an accent on nothing, then a word
        ("º\u0301-आज", "en-us", "phonemes"),  # a letter to Unicode, not to espeak
        ("xक-आज", "es", "phonemes"),  # a word espeak cuts where its script changes
        ("hello. xम-ईघ", "pt-br", "phonemes"),
        ("ᏩƳଌ", "hi", "phonemes"),  # three scripts in a word: cut twice, no hyphen
    ]
    + [
        # Word times read every word alone: each is a clause's start (in Hindi,
        # "COVID-उन्नीस" after the normalizer).
        ("मामले ，-COVID-19 फिर बढ़े।", "hi", "words"),
    ]
)


@pytest.mark.parametrize(("text", "lang", "how"), CRASHERS)
def test_texts_that_crashed_espeak_are_phonemized(phonemizing, text, lang, how) -> None:
    assert phonemizing.survives(text, lang, how), f"espeak-ng crashed on {text!r} ({lang})"


DEVANAGARI = ("आज", "नमस्कार", "पाँच", "क", "कोविड", "और", "ईघ", "लच्छेद", "ा", "ि", "्", "५")
CJK = ("中", "日本", "语", "あ", "カ", "ー", "한")
LATIN = ("a", "COVID", "hello", "x", "e", "mail", "19", "5", "A", "é", "ß")
SYMBOLS = "'\"″′`´^~!?.,;:#$%&*+/<=>@\\|_()[]{}₹€£¥§°©®™…，。、！？：；「」（）·•«»“”‘’"
INVISIBLE = ("\u200d", "\u200c", "\u00ad", "\u0301")
DASHES = ("-", "-", "-", "–", "—", "‐", "‑", "−")

any_character = st.characters(exclude_categories=("Cs", "Cc"))
fragments = st.one_of(
    st.sampled_from(SYMBOLS),
    st.sampled_from(INVISIBLE),
    st.sampled_from(DASHES),
    st.sampled_from(DEVANAGARI),
    st.sampled_from(CJK),
    st.sampled_from(LATIN),
    st.sampled_from((" ", ", ", ". ")),
    any_character,
)


def _run(parts: st.SearchStrategy[str], most: int, least: int = 0) -> st.SearchStrategy[str]:
    return st.lists(parts, min_size=least, max_size=most).map("".join)


# A clause's opening: what may stand before a dash, dashes, what may follow, and more.
openings = st.builds(
    lambda *parts: "".join(parts),
    st.sampled_from(("", "hello. ", "a, ", "आज, ", "中。", "x ")),
    _run(
        st.one_of(
            st.sampled_from((*SYMBOLS, *LATIN, *DEVANAGARI, *CJK)),
            st.sampled_from(INVISIBLE),
            any_character,
        ),
        2,
    ),
    _run(st.sampled_from(DASHES), 3, least=1),
    _run(st.one_of(st.sampled_from(DEVANAGARI + CJK + LATIN), any_character), 3, least=1),
    _run(fragments, 4),
)


def _never_crash(phonemizing: Phonemizing, text: str) -> None:
    for lang in LANGUAGES:
        assert phonemizing.survives(text, lang), f"espeak-ng crashed on {text!r} ({lang})"


@settings(max_examples=150, deadline=None)
@given(openings)
def test_clause_openings_never_crash_espeak(phonemizing, text: str) -> None:
    _never_crash(phonemizing, text)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(openings)
def test_many_clause_openings_never_crash_espeak(phonemizing, text: str) -> None:
    _never_crash(phonemizing, text)


def _letters_of_two_scripts_touch(text: str) -> bool:
    last = None
    for char in text:
        kind = script(char)
        if kind is not None:
            if last is not None and kind != last:
                return True
            last = kind
        elif not unicodedata.category(char).startswith(("M", "Lm")):
            last = None
    return False


@settings(max_examples=150, deadline=None)
@given(st.lists(fragments, max_size=12).map("".join))
def test_the_guard_only_parts_scripts_and_turns_hyphens_into_spaces(text: str) -> None:
    safe = safe_for_espeak(text)
    # Nothing but spaces added and `-` taken away.
    assert [c for c in safe if c not in " -"] == [c for c in text if c not in " -"]
    assert safe.count("-") <= text.count("-")
    assert not _letters_of_two_scripts_touch(safe)
    # Every `-` espeak may take for a hyphen joins a whole word before it.
    for i, char in enumerate(safe):
        if char == "-" and hyphen_before(safe, i):
            assert joins_words(safe, i)
    assert safe_for_espeak(safe) == safe
    if text.isascii() and "-" not in text:
        assert safe == text


def test_a_real_hyphen_and_one_script_words_stay() -> None:
    for text in ("COVID-19", "e-mail", "c'est-à-dire", "day-to-day", "5-आज", "राम-श्याम", "x - y"):
        assert safe_for_espeak(text) == text


# misaki's English G2P asks an espeak-ng of its own about the words it lacks.
_MISAKI_FALLBACK = """
import sys
from misaki.espeak import EspeakFallback
from misaki.token import MToken
from wyoming_kokoro.text.g2p.espeak_guard import GuardedFallback
for british in (False, True):
    fallback = GuardedFallback(EspeakFallback(british=british))
    for word in sys.argv[1:]:
        phonemes, _ = fallback(MToken(word, "NN", " "))
        assert phonemes, word
"""


def test_misakis_espeak_fallback_is_guarded_too() -> None:
    words = ["'-आज", "，-कोविड", "xक-आज", "hello"]
    result = subprocess.run(
        [sys.executable, "-c", _MISAKI_FALLBACK, *words],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
