"""Text made safe for espeak-ng before it is phonemized.

espeak-ng (1.52, as kokoro-onnx bundles it) crashes the whole process (SIGSEGV in
MakePhonemeList) on a `-` it takes for a hyphen that joins no whole word before it,
at the start of a clause: after a character it drops (a symbol, punctuation, a
joiner, a mark on nothing, another `-`: "'-आज", "₹-पाँच" in Hindi,
"，-COVID-उन्नीस", "---लच्छेद") or after a word it cuts in two where the script
changes ("xक-आज"). When the word after it is read with another phoneme table
(Devanagari to an English voice, a CJK or Latin word to a Hindi one), the clause's
first phonemes are looked up in the wrong table. Such a `-` is not spoken, so it
becomes a space: the text reads the same (but for a word boundary) and espeak never
sees the shape. A `-` after a Latin or Devanagari word ("COVID-19", "e-mail",
"राम-श्याम") stays; after anything else (a word in another script, which none of
our languages hyphenates) it is a space too, rather than a crash found later.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable
from typing import Any

_DIGITS = frozenset("0123456789")  # other digits some languages drop
_MARKS = range(0x300, 0x370)  # combining accents, on a Latin letter
# Devanagari's letters and signs (not its digits or dandas): Hindi's hyphenated words.
_DEVANAGARI = (range(0x900, 0x964), range(0x971, 0x980))


def _kind(char: str) -> str | None:
    """What a character of a word espeak-ng keeps whole is: a Latin or Devanagari
    letter, an ASCII digit, a combining accent; None for anything else."""
    if char in _DIGITS:
        return "digit"
    code = ord(char)
    if code in _MARKS:
        return "mark"
    if any(code in block for block in _DEVANAGARI):
        return "devanagari"
    if unicodedata.category(char) in ("Lu", "Ll", "Lt") and unicodedata.name(char, "").startswith(
        "LATIN "
    ):
        return "latin"
    return None


def joins_words(text: str, at: int) -> bool:
    """Whether the `-` at `at` follows a word espeak-ng reads whole: Latin letters
    (with accents), Devanagari, or ASCII digits, one kind only (espeak cuts "xक"
    where the script changes, and drops an accent on nothing)."""
    start = at
    while start > 0 and _kind(text[start - 1]) is not None:
        start -= 1
    kinds = [_kind(c) for c in text[start:at]]
    if not kinds or kinds[0] == "mark":
        return False
    return len({k for k in kinds if k != "mark"}) == 1


def hyphen_before(text: str, at: int) -> bool:
    """Whether espeak-ng may take the `-` at `at` for a hyphen: something that may be a
    letter follows (not a space, a digit or another `-`)."""
    after = text[at + 1 : at + 2]
    return bool(after) and not after.isspace() and after not in _DIGITS and after != "-"


def safe_for_espeak(text: str) -> str:
    """`text` with every `-` that espeak-ng would take for a hyphen but that follows
    no word it reads whole turned into a space (the shape that crashes it)."""
    if "-" not in text:
        return text
    chars = list(text)
    for i, char in enumerate(chars):
        if char == "-" and hyphen_before(text, i) and not joins_words(text, i):
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
