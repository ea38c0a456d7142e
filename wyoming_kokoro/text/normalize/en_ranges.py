"""English ranges of money ("$1.25-$1.50", "$5-10", "5-10 €", "£1-2 million") and of
times with am/pm on both ends ("9am-5pm").

Each amount alone is read by en_units; a range is read here first, so that its
dash is said "to" and its second end, written without a sign, is money too. Times
are read by en_dates, each end alone; the dash between them is said "to" here.
"""

from __future__ import annotations

import re

from wyoming_kokoro.text.normalize.en_units import (
    CODES,
    SCALE,
    SCALES,
    SYM,
    currency,
    say_money,
)
from wyoming_kokoro.text.normalize.en_words import NUMBER, RANGE_MARK, number

_SCALED = rf"(?:\s?(?P<{{0}}>{SCALE})(?![\w]))?"
# "$5-$10", "$5-10", "$5 to $10" (after "to" the sign must come again: "$5 to 10 people").
_PREFIX_RANGE_RE = re.compile(
    rf"(?<![\w$])(?P<neg>-)?(?:(?P<sym>{SYM})|\b(?P<code>{CODES})\b)\s?(?P<a>{NUMBER})"
    + _SCALED.format("sa")
    + rf"(?:\s?[-–—]\s?(?:{SYM})?|\s+to\s+(?:{SYM}))\s?(?P<b>{NUMBER})"
    + _SCALED.format("sb")
    + r"(?![\w%°])"
)
# "5-10 €", "1.25-1.50 EUR".
_SUFFIX_RANGE_RE = re.compile(
    rf"(?<![\w.,$])(?P<neg>-)?(?P<a>{NUMBER}){_SCALED.format('sa')}{RANGE_MARK}(?P<b>{NUMBER})"
    + _SCALED.format("sb")
    + rf"\s?(?:(?P<sym>[€£¥₹₽₩$])|(?P<code>{CODES})\b)"
)
_HINT_RE = re.compile(rf"(?:{SYM}|{CODES})")
# The dash after a time en_dates has read ("nine a m-five p m").
_AFTER_TIME_RE = re.compile(r"(?<=\b[ap] m)\s*[-–—]\s*(?=[a-z])")


def _range(m: re.Match[str], gb: bool) -> str:
    code, a, b = currency(m), m["a"], m["b"]
    sign = "minus " if m["neg"] else ""
    if m["sa"] or m["sb"]:  # "one to two million pounds"
        scale_a = SCALES[m["sa"]] if m["sa"] else None
        first = number(a, gb) + (f" {scale_a}" if scale_a and m["sb"] else "")
        return f"{sign}{first} to {say_money(code, b, gb, scale=m['sb'] or m['sa'])}"
    if "." not in a + b:  # whole amounts: "five to ten dollars"
        return f"{sign}{number(a, gb)} to {say_money(code, b, gb)}"
    return f"{say_money(code, a, gb, bool(m['neg']))} to {say_money(code, b, gb)}"


def money_ranges(text: str, gb: bool) -> str:
    """Ranges of money, before en_units reads each amount alone."""
    if not _HINT_RE.search(text):
        return text
    text = _PREFIX_RANGE_RE.sub(lambda m: _range(m, gb), text)
    return _SUFFIX_RANGE_RE.sub(lambda m: _range(m, gb), text)


def time_ranges(text: str, gb: bool) -> str:
    """The dash between two times read with their am/pm said "to"."""
    return _AFTER_TIME_RE.sub(" to ", text) if " m" in text else text
