"""Text made safe for espeak-ng before it is phonemized.

espeak-ng (1.52, as kokoro-onnx bundles it) crashes the whole process (SIGSEGV in
MakePhonemeList) when a clause opens with words it joins as a hyphen does, and a
joined word is read with another phoneme table than the one before it (Devanagari
to an English voice, a CJK or Latin word to a Hindi one): the clause's first
phonemes are looked up in the wrong table. It joins words so at a `-` after a
character it drops (a symbol, punctuation, a joiner, a mark on nothing, another
`-`: "'-आज", "₹-पाँच" in Hindi, "，-COVID-उन्नीस", "---लच्छेद"), and where it cuts
a word in two because the script changes ("xक-आज", "ᏩƳଌ" in Hindi).

So letters of two scripts get a space between them, and such a `-` (never spoken)
becomes a space: the text reads the same but for word boundaries, and espeak never
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
_SCRIPTED = frozenset(("Lu", "Ll", "Lt", "Lo"))  # letters with a script (not ˈ or ー)
# Devanagari's letters and signs (not its digits or dandas): Hindi's hyphenated words.
_DEVANAGARI = (range(0x900, 0x964), range(0x971, 0x980))


def _kind(char: str) -> str | None:
    """What a character of a word espeak-ng keeps whole is: a Latin letter (composed:
    "é", not "e" and an accent), a Devanagari one, an ASCII digit; None otherwise."""
    if char in _DIGITS:
        return "digit"
    if any(ord(char) in block for block in _DEVANAGARI):
        return "devanagari"
    if unicodedata.category(char) in ("Lu", "Ll", "Lt") and unicodedata.name(char, "").startswith(
        "LATIN "
    ):
        return "latin"
    return None


def joins_words(text: str, at: int) -> bool:
    """Whether the `-` at `at` follows a word espeak-ng reads whole: Latin letters,
    Devanagari or ASCII digits, one kind only (espeak cuts "xक" where the script
    changes, and an accent on "x" or on nothing crashed it as well)."""
    start = at
    while start > 0 and _kind(text[start - 1]) is not None:
        start -= 1
    if start > 0 and unicodedata.category(text[start - 1]).startswith("M"):
        return False  # a mark on nothing before the word: espeak reads it into the word
    return len({_kind(c) for c in text[start:at]}) == 1


def hyphen_before(text: str, at: int) -> bool:
    """Whether espeak-ng may take the `-` at `at` for a hyphen: something that may be a
    letter follows (not a space, a digit or another `-`)."""
    after = text[at + 1 : at + 2]
    return bool(after) and not after.isspace() and after not in _DIGITS and after != "-"


def script(char: str) -> str | None:
    """The script of a letter that has one, as its Unicode name begins (LATIN,
    DEVANAGARI, CJK); None for marks, modifier letters (ˈ, ー) and non-letters."""
    if unicodedata.category(char) not in _SCRIPTED:
        return None
    return unicodedata.name(char, "?").split(" ", 1)[0]


def _scripts_apart(text: str) -> str:
    """A space wherever a letter follows one of another script ("xक" → "x क"): espeak
    cuts the word there itself, but joins the parts as a hyphen does."""
    if text.isascii():
        return text
    out: list[str] = []
    last: str | None = None
    for char in text:
        kind = script(char)
        if kind is not None:
            if last is not None and kind != last:
                out.append(" ")
            last = kind
        elif not unicodedata.category(char).startswith(("M", "Lm")):
            last = None
        out.append(char)
    return "".join(out)


def safe_for_espeak(text: str) -> str:
    """`text` as espeak-ng can read it: letters of two scripts never in one word, and
    every `-` it would take for a hyphen but that follows no word it reads whole a
    space (the shapes that crash it)."""
    text = _scripts_apart(text)
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
