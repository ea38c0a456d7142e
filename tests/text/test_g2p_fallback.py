"""A G2P that fails on a piece hands it to espeak-ng; a piece espeak-ng cannot read
either is left out. One warning each, never an exception out of the Phonemizer: one
odd piece must not cost the rest of an utterance (text/g2p/__init__.py)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
from kokoro_onnx.tokenizer import Tokenizer

from wyoming_kokoro.text.g2p import Phonemizer


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


class BrokenG2P:
    """Stands in for a G2P with a bug: it raises on every piece."""

    def __call__(self, text: str) -> str:
        raise ValueError("no reading")

    def readings(self, text: str) -> list[tuple[str, str]]:
        raise ValueError("no reading")


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Ours: phonemizer warns of its own (words count mismatch) on some languages."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith("wyoming_kokoro")
    ]


def test_a_piece_espeak_cannot_read_is_left_out_with_one_warning(tokenizer, caplog) -> None:
    phonemize = Phonemizer(tokenizer.phonemize)
    assert phonemize("Hello there.", "xx-unknown") == ""
    assert len(warnings_in(caplog)) == 1
    assert "espeak-ng" in warnings_in(caplog)[0]
    assert phonemize("Hello there.", "en-us") == tokenizer.phonemize("Hello there.", "en-us")


@pytest.mark.parametrize(
    ("lang", "name", "text", "espeak"),
    [
        ("zh", "Chinese", "你好世界", "cmn"),
        ("ja", "Japanese", "こんにちは", "ja"),
    ],
)
def test_a_piece_a_g2p_fails_on_is_read_by_espeak(
    tokenizer, caplog, lang, name, text, espeak
) -> None:
    phonemize = Phonemizer(tokenizer.phonemize)
    phonemize._cjk[lang] = BrokenG2P()  # as a G2P with a bug
    assert phonemize(text, lang) == tokenizer.phonemize(text, espeak)
    assert phonemize.readings(text, lang) == [(text, tokenizer.phonemize(text, espeak))]
    said = warnings_in(caplog)
    assert len(said) == 2 and all(name in line and "espeak-ng" in line for line in said)


def test_misaki_failing_hands_the_piece_to_espeak(tokenizer, caplog) -> None:
    phonemize = Phonemizer(tokenizer.phonemize)
    phonemize._misaki["en-us"] = BrokenG2P()
    assert phonemize("Hello there.", "en-us") == tokenizer.phonemize("Hello there.", "en-us")
    assert len(warnings_in(caplog)) == 1 and "misaki" in warnings_in(caplog)[0]


def test_when_espeak_fails_too_the_piece_is_left_out(caplog) -> None:
    def espeak(text: str, lang: str) -> str:
        raise RuntimeError("espeak-ng is gone")

    phonemize = Phonemizer(espeak)
    phonemize._cjk["ja"] = BrokenG2P()
    assert phonemize("こんにちは、世界", "ja") == ""
    assert phonemize.readings("こんにちは", "ja") == [("こんにちは", "")]
    said = warnings_in(caplog)
    assert len(said) == 4 and "Japanese" in said[0] and "either" in said[1]


def test_only_the_failing_piece_goes_to_espeak(tokenizer, caplog) -> None:
    """A lexicon cuts a text into pieces: the G2P's failure on one costs only that one."""
    phonemize = Phonemizer(tokenizer.phonemize, lexicon={"kokoro": "/kˈOkəɹO/"})
    phonemize._misaki["en-us"] = BrokenG2P()
    assert phonemize("Kokoro speaks", "en-us") == "kˈOkəɹO " + tokenizer.phonemize("speaks")


# The Japanese G2P's library missing (a broken install): Japanese is read by espeak-ng.
_WITHOUT_OPENJTALK = """
import json, logging, sys
sys.modules["pyopenjtalk"] = None  # as if it were not installed
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from kokoro_onnx.tokenizer import Tokenizer
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.g2p.espeak_guard import safe_for_espeak
tokenizer = Tokenizer()
phonemize = Phonemizer(tokenizer.phonemize)
said = [phonemize(text, "ja") for text in sys.argv[1:]]
espeak = [tokenizer.phonemize(safe_for_espeak(text), "ja") for text in sys.argv[1:]]
print(json.dumps([said, espeak]))
"""


def test_japanese_is_read_by_espeak_when_its_g2p_cannot_load() -> None:
    texts = ["こんにちは", "ドアが開いています。"]
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_OPENJTALK, *texts],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    said, espeak = json.loads(result.stdout)
    assert said == espeak and all(said)
    loading = [line for line in result.stderr.splitlines() if "Japanese G2P" in line]
    assert len(loading) == 1, result.stderr  # once, not once per piece
