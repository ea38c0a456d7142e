"""Text made safe for espeak-ng before it is phonemized.

espeak-ng (1.52, as kokoro-onnx bundles it) crashes the whole process (SIGSEGV in
MakePhonemeList) on one shape of text: a `-` right after a character it drops (a
symbol, punctuation, a joiner, another `-`) and right before a letter, at the start
of a clause ("'-आज", "₹-पाँच" in Hindi, "，-COVID-उन्नीस", "---लच्छेद"). It takes
such a `-` for a hyphen joining two words, and when the word after it is read with
another phoneme table (Devanagari to an English voice, a CJK or Latin word to a
Hindi one) the clause's first phonemes are looked up in the wrong table. The `-`
joins nothing there and is not spoken, so it becomes a space: the text reads the
same (but for a word boundary) and espeak never sees the shape. A `-` after a letter
or a digit ("COVID-19", "e-mail") is a real hyphen and stays.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable
from typing import Any

_DIGITS = frozenset("0123456789")  # other digits some languages drop


def _letter(char: str) -> bool:
    """A letter or a combining mark (Devanagari vowel signs are marks)."""
    return unicodedata.category(char)[0] in "LM"


def joins_words(text: str, at: int) -> bool:
    """Whether the character before `at` is one espeak-ng keeps in a word: a letter
    or an ASCII digit, maybe with marks on it (a mark on nothing is dropped)."""
    before = at - 1
    while before >= 0 and unicodedata.category(text[before])[0] == "M":
        before -= 1
    return before >= 0 and (unicodedata.category(text[before])[0] == "L" or text[before] in _DIGITS)


def safe_for_espeak(text: str) -> str:
    """`text` with every `-` that joins no word before it to a letter after it turned
    into a space (the shape that crashes espeak-ng; read the same)."""
    if "-" not in text:
        return text
    chars = list(text)
    for i, char in enumerate(chars):
        if (
            char == "-"
            and i + 1 < len(chars)
            and _letter(chars[i + 1])
            and not joins_words(text, i)
        ):
            chars[i] = " "
    return "".join(chars)


class GuardedFallback:
    """misaki's espeak-ng fallback (`EspeakFallback`), asked only about safe text: it
    phonemizes the words misaki's lexicon lacks, with espeak-ng of its own."""

    def __init__(self, fallback: Callable[[Any], Any]) -> None:
        self._fallback = fallback

    def __call__(self, token: Any) -> Any:
        safe = safe_for_espeak(token.text)
        if safe != token.text:
            token = dataclasses.replace(token, text=safe)
        return self._fallback(token)
