"""English number words: cardinals, ordinals, years, digit strings.

Written by hand rather than with num2words: English needs two styles (US without
"and", GB with it), and this runs on every number of every announcement.
"""

from __future__ import annotations

import re
from types import MappingProxyType

ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = ("", "thousand", "million", "billion", "trillion", "quadrillion")
_ORDINAL_WORDS = MappingProxyType(
    {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
     "nine": "ninth", "twelve": "twelfth"}
)  # fmt: skip

# Longer runs of digits are codes, not quantities: read digit by digit, never made an int
# (which Python also refuses past 4,300 digits).
MOST_DIGITS = 18

# A written number: "1,234.56" (thousands commas) or "21.5" or "7".
NUMBER = r"\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?"

# Between the two ends of a range: a hyphen or a dash, spaced or not, or "to".
RANGE_MARK = r"(?:\s?[-–—]\s?|\s+to\s+)"

_NEXT_SENTENCE = re.compile(r"\s*$|\s+[A-Z]")


def _below_100(n: int) -> str:
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + ("-" + ONES[ones] if ones else "")


def _below_1000(n: int, gb: bool) -> str:
    hundreds, rest = divmod(n, 100)
    if not hundreds:
        return _below_100(n)
    words = ONES[hundreds] + " hundred"
    if rest:
        words += (" and " if gb else " ") + _below_100(rest)
    return words


def digits(text: str) -> str:
    """Read digit by digit: "0042" -> "zero zero four two"."""
    return " ".join(ONES[int(c)] for c in text if c.isdigit())


def cardinal(n: int, gb: bool = False) -> str:
    """1234 -> "one thousand two hundred thirty-four" (GB: "... hundred and thirty-four")."""
    if n < 0:
        return "minus " + cardinal(-n, gb)
    if n < 100:
        return _below_100(n)
    if n >= 1000 ** len(_SCALES):
        return digits(str(n))  # nobody says these; digits at least stay exact
    groups = []
    while n:
        n, group = divmod(n, 1000)
        groups.append(group)
    parts = []
    for power in range(len(groups) - 1, -1, -1):
        group = groups[power]
        if not group:
            continue
        words = _below_1000(group, gb)
        if power:
            words += " " + _SCALES[power]
        elif gb and len(groups) > 1 and group < 100:
            words = "and " + words  # "one thousand and five"
        parts.append(words)
    return " ".join(parts)


def ordinal(n: int, gb: bool = False) -> str:
    """22 -> "twenty-second"."""
    words = cardinal(n, gb)
    cut = max(words.rfind(" "), words.rfind("-")) + 1
    head, last = words[:cut], words[cut:]
    if last in _ORDINAL_WORDS:
        return head + _ORDINAL_WORDS[last]
    if last.endswith("y"):
        return head + last[:-1] + "ieth"
    return head + last + "th"


def plural(words: str) -> str:
    """Decades and fractions: "ninety" -> "nineties", "third" -> "thirds"."""
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def year(n: int, gb: bool = False) -> str:
    """1999 -> "nineteen ninety-nine", 1905 -> "nineteen oh five", 2005 -> "two thousand five"."""
    if not 1000 <= n <= 9999 or n % 1000 < 10:
        return cardinal(n, gb)  # 2000, 2005, 1001: said as plain numbers
    century, rest = divmod(n, 100)
    if rest == 0:
        return _below_100(century) + " hundred"
    if rest < 10:
        return f"{_below_100(century)} oh {ONES[rest]}"
    return f"{_below_100(century)} {_below_100(rest)}"


def number(text: str, gb: bool = False) -> str:
    """Read a written number: "1,234.5" -> "one thousand ... point five"; "007" by digits."""
    whole, _, frac = text.replace(",", "").partition(".")
    if not whole:
        words = ""
    elif (len(whole) > 1 and whole[0] == "0") or len(whole) > MOST_DIGITS:
        words = digits(whole)  # codes and IDs, not quantities
    else:
        words = cardinal(int(whole), gb)
    if frac:
        words = f"{words} point {digits(frac)}".lstrip()
    return words


def range_end(text: str) -> str:
    """An end of a range without the zeros that only pad it to the other end's
    precision: "1.50" -> "1.5", "2.00" -> "2" (a listener hears "one point five to two")."""
    if "." not in text:
        return text
    text = text.rstrip("0").rstrip(".")
    return text or "0"


def keep_period(m: re.Match[str]) -> str:
    """Give back the period an abbreviation swallowed when it also ended the sentence."""
    if m.group(0).endswith(".") and _NEXT_SENTENCE.match(m.string, m.end()):
        return "."
    return ""
