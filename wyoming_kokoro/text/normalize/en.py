"""English text normalization (en-us, en-gb): written forms to the words a person says.

The passes run in a fixed order, most specific first: an IP address or a date
holds numbers that a later, more general pass would otherwise read on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType

from wyoming_kokoro.text.charsets import SPACE_RUN
from wyoming_kokoro.text.normalize.en_dates import dates_and_times, weekdays, years
from wyoming_kokoro.text.normalize.en_ranges import money_ranges, time_ranges
from wyoming_kokoro.text.normalize.en_text import (
    abbreviations,
    domains,
    emails,
    ip_addresses,
    phones,
    urls,
    versions,
)
from wyoming_kokoro.text.normalize.en_units import money, units
from wyoming_kokoro.text.normalize.en_words import (
    MOST_DIGITS,
    NUMBER,
    RANGE_MARK,
    cardinal,
    digits,
    number,
    ordinal,
    plural,
    range_end,
    year,
)
from wyoming_kokoro.text.normalize.passes import run_passes

_DIGIT_RE = re.compile(r"\d")

_VULGAR = MappingProxyType(
    {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5),
     "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8),
     "⅞": (7, 8)}
)  # fmt: skip
_VULGAR_RE = re.compile(rf"(?:(?<![\w.,])(\d+)\s?)?([{''.join(_VULGAR)}])")
_VULGAR_HINT_RE = re.compile(f"[{''.join(_VULGAR)}]")
_FRACTION_RE = re.compile(r"(?<![\w./-])(?:(\d+)\s)?(\d{1,3})/(\d{1,3})(?![\w/]|\.\d)")
_ORDINAL_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:st|nd|rd|th|ST|ND|RD|TH)\b")

# After these words a Roman numeral is a plain number ("Chapter IV" -> "Chapter four").
_ROMAN_COUNTED = frozenset(
    {"chapter", "part", "volume", "vol", "book", "act", "scene", "section", "phase", "level",
     "stage", "episode", "season", "type", "class", "war", "article", "title", "round", "grade",
     "tier", "mark", "mk", "series", "bowl", "schedule", "appendix", "step", "unit", "zone",
     "sector", "division", "league", "gen", "generation", "psalm", "canto"}
)  # fmt: skip
_ROMAN_VALUES = MappingProxyType({"I": 1, "V": 5, "X": 10, "L": 50})
_ROMAN_RE = re.compile(
    r"\b(?P<prev>[A-Z][a-z]+\.?)\s+(?P<r>(?=[IVXL])(?:XL|L?X{0,3})(?:IX|IV|V?I{0,3}))\b"
)
_ROMAN_HINT_RE = re.compile(r"[IVXL](?:[IVXL]|\b)")  # a numeral of two letters, or V/X alone

_SYMBOL_WORDS = MappingProxyType({"&": " and ", "+": " plus ", "=": " equals ", "@": " at "})
_SYMBOL_RE = re.compile(r"\s*(?:[&+@]|(?<![=<>!])=(?![=>]))\s*")
_COMPARE_WORDS = MappingProxyType(
    {"<=": "at most", "≤": "at most", ">=": "at least", "≥": "at least", "<": "less than",
     ">": "more than", "~": "about", "≈": "about", "#": "number"}
)  # fmt: skip
_COMPARE_RE = re.compile(rf"(?:<=|>=|[≤≥<>~≈]|(?<!&)#)\s?(?=[-+]?\.?\d|[{''.join(_VULGAR)}])")
_SYMBOL_HINT_RE = re.compile(r"[&+=@<>~≈≤≥#×]")
_DIMENSION_RE = re.compile(r"(?<=\d)\s?[x×]\s?(?=\d)")
_RATIO_RE = re.compile(r"(?<![\w:.])(\d+):(\d+)(?![\d:])")  # not a clock time: "16:9", "3:2"
_LETTERS_DIGITS_RE = re.compile(r"\b([A-Z]{1,5})(\d{1,3}(?:\.\d+)?)(?![\w]|\.\d)")
_DIGITS_LETTERS_RE = re.compile(r"(?<![\w.,])(\d{1,4})([A-Z]{1,3})\b")
_NUMBER_RE = re.compile(
    rf"(?<![\w.])(?:(?<![^\s(\[=:/])(?P<sign>-)(?=\.?\d))?(?P<a>{NUMBER}|\.\d+)"
    rf"(?:{RANGE_MARK}(?P<b_sign>-(?=\d))?(?P<b>{NUMBER}))?(?![\w])"
)
_WORD_SLASH_RE = re.compile(r"(?<=[A-Za-z])/(?=[A-Za-z])")
_SPACE_BEFORE_PUNCT_RE = re.compile(r"[ \t]+(?=[,.!?;:](?:\s|$))")


def _fraction_words(num: int, den: int, gb: bool, mixed: bool = False) -> str:
    one = {2: "half", 4: "quarter"}.get(den) or ordinal(den, gb)
    many = "halves" if den == 2 else plural(one)
    if num == 1:
        return ("a " if mixed else "one ") + one
    return f"{cardinal(num, gb)} {many}"


def _vulgar(m: re.Match[str], gb: bool) -> str:
    num, den = _VULGAR[m[2]]
    if m[1]:
        return f"{number(m[1], gb)} and {_fraction_words(num, den, gb, mixed=True)}"
    return _fraction_words(num, den, gb)


def _fraction(m: re.Match[str], gb: bool) -> str:
    num, den = int(m[2]), int(m[3])
    if m[1] and 0 < num < den:
        return f"{number(m[1], gb)} and {_fraction_words(num, den, gb, mixed=True)}"
    whole = f"{number(m[1], gb)} " if m[1] else ""
    if (num, den) == (24, 7) or num == den:
        return f"{whole}{cardinal(num, gb)} {cardinal(den, gb)}"  # "24/7", "50/50"
    if den < 2 or den > 100:
        return f"{whole}{number(m[2], gb)} over {number(m[3], gb)}"
    return whole + _fraction_words(num, den, gb)


def _roman_value(numeral: str) -> int:
    total = 0
    for i, c in enumerate(numeral):
        value = _ROMAN_VALUES[c]
        later = numeral[i + 1 : i + 2]
        total += -value if later and _ROMAN_VALUES[later] > value else value
    return total


def _roman(m: re.Match[str], gb: bool) -> str:
    prev, numeral = m["prev"], m["r"]
    if numeral == "I":
        return m[0]  # the pronoun, whatever comes before it
    if prev.rstrip(".").lower() in _ROMAN_COUNTED:
        return f"{prev} {cardinal(_roman_value(numeral), gb)}"
    if len(numeral) < 2 or "L" in numeral:
        return m[0]  # "Model X", "Size XL": letters, not regnal numbers
    return f"{prev} the {ordinal(_roman_value(numeral), gb)}"  # "Henry VIII"


def _number(m: re.Match[str], gb: bool) -> str:
    a, b = m["a"], m["b"]
    sign = "minus " if m["sign"] else ""
    if b is None:
        return sign + number(a, gb)
    if len(a) == len(b) == 4 and a.isdigit() and b.isdigit() and 1100 <= int(a) < int(b) <= 2099:
        return f"{year(int(a), gb)} to {year(int(b), gb)}"  # "2020-2025"
    b_sign = "minus " if m["b_sign"] else ""
    return f"{sign}{number(range_end(a), gb)} to {b_sign}{number(range_end(b), gb)}"


def _ordinal(text: str, gb: bool) -> str:
    """ "22" -> "twenty-second"; a run of digits too long for a number, digit by digit."""
    text = text.replace(",", "")
    if len(text) > MOST_DIGITS:
        return f"{digits(text[:-1])} {ordinal(int(text[-1]), gb)}"
    return ordinal(int(text), gb)


def _numbers(text: str, gb: bool) -> str:
    if not _DIGIT_RE.search(text):
        return text
    if "/" in text:
        text = _FRACTION_RE.sub(lambda m: _fraction(m, gb), text)
    text = _ORDINAL_RE.sub(lambda m: _ordinal(m[1], gb), text)
    if ":" in text:
        text = _RATIO_RE.sub(lambda m: f"{number(m[1], gb)} to {number(m[2], gb)}", text)
    text = _LETTERS_DIGITS_RE.sub(lambda m: f"{m[1]} {number(m[2], gb)}", text)
    text = _DIGITS_LETTERS_RE.sub(lambda m: f"{number(m[1], gb)} {m[2]}", text)
    return _NUMBER_RE.sub(lambda m: _number(m, gb), text)


def _symbols(text: str, gb: bool) -> str:
    if not _SYMBOL_HINT_RE.search(text):
        return text
    text = _COMPARE_RE.sub(lambda m: f" {_COMPARE_WORDS[m[0].strip()]} ", text)
    text = _SYMBOL_RE.sub(lambda m: _SYMBOL_WORDS[m[0].strip()], text)
    return text.replace("×", " times ")


def _with_digits(apply: Callable[[str, bool], str]) -> Callable[[str, bool], str]:
    """A pass that only numbers can concern, skipped for text without a digit."""
    return lambda text, gb: apply(text, gb) if _DIGIT_RE.search(text) else text


def _vulgar_fractions(text: str, gb: bool) -> str:
    if not _VULGAR_HINT_RE.search(text):
        return text
    return _VULGAR_RE.sub(lambda m: _vulgar(m, gb), text)


def _roman_numerals(text: str, gb: bool) -> str:
    if not _ROMAN_HINT_RE.search(text):
        return text
    return _ROMAN_RE.sub(lambda m: _roman(m, gb), text)


def _spaces(text: str, gb: bool) -> str:
    if "/" in text:
        text = _WORD_SLASH_RE.sub(" ", text)  # "on/off" -> "on off"
    text = SPACE_RUN.sub(" ", text)
    return _SPACE_BEFORE_PUNCT_RE.sub("", text).strip()


# The passes in order, most specific first; each is contained (passes.py).
_PASSES: tuple[tuple[str, Callable[[str, bool], str]], ...] = (
    ("URLs", lambda text, gb: urls(text)),
    ("e-mail addresses", lambda text, gb: emails(text)),
    ("domains", lambda text, gb: domains(text)),
    ("IP addresses", lambda text, gb: ip_addresses(text)),
    ("weekdays", lambda text, gb: weekdays(text)),
    # "10 x 20 cm", before units take the "20"
    ("dimensions", _with_digits(lambda text, gb: _DIMENSION_RE.sub(" by ", text))),
    ("dates and times", _with_digits(dates_and_times)),
    ("time ranges", time_ranges),
    ("phones", _with_digits(lambda text, gb: phones(text))),
    ("versions", _with_digits(versions)),
    ("money ranges", _with_digits(money_ranges)),
    ("money", money),
    ("units", units),  # also units without a number: "in km/h"
    ("years", _with_digits(years)),
    ("symbols", _symbols),  # before fractions, so "> ½" still sees what follows
    ("fractions", _vulgar_fractions),
    ("Roman numerals", _roman_numerals),
    ("abbreviations", lambda text, gb: abbreviations(text)),
    ("numbers", _numbers),
    ("spaces", _spaces),
)


def normalize_english(text: str, gb: bool = False) -> str:
    """Spell out numbers, units, dates, addresses and abbreviations for an English voice."""
    return run_passes(text, [(name, _dialect(apply, gb)) for name, apply in _PASSES], "English")


def _dialect(apply: Callable[[str, bool], str], gb: bool) -> Callable[[str], str]:
    return lambda text: apply(text, gb)
