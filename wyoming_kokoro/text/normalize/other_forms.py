"""The written forms Spanish, French, Italian, Brazilian Portuguese and Hindi numbers
come in: amounts of money, quantities, plain numbers and ranges, times, ISO dates.

other.py reads what these match.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import NamedTuple

SYMBOLS = MappingProxyType(
    {"R$": "BRL", "US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR",
     "Rs.": "INR", "Rs": "INR"}
)  # fmt: skip
_CODES = "EUR|USD|BRL|GBP|INR|JPY|CHF"

# Written numbers: continental "1.234.567,89" / "21,5" / "21.5"; Indian "1,23,456.78".
# A trailing "(?![.,]?\d)" refuses to read half of something else ("2.500.000" in Hindi).
_NUM_EU = r"(?:\d{1,3}(?:\.\d{3})+(?!\d)(?:,\d+)?|\d+(?:[.,]\d+)?)(?![.,]?\d)"
_NUM_HI = r"(?:\d{1,3}(?:,\d{2,3})*,\d{3}(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?)(?![.,]?\d)"
THOUSANDS_RE = re.compile(r"\d{1,3}(?:\.\d{3})+")
UNITS = MappingProxyType(
    {"°C": "C", "° C": "C", "℃": "C", "°F": "F", "° F": "F", "℉": "F", "°": "", "%": "%"}
)


class _Patterns(NamedTuple):
    prefix_range: re.Pattern[str]
    suffix_range: re.Pattern[str]
    prefix_money: re.Pattern[str]
    suffix_money: re.Pattern[str]
    quantity: re.Pattern[str]
    number: re.Pattern[str]


def _patterns(num: str) -> _Patterns:
    sym = "|".join(re.escape(s) for s in sorted(SYMBOLS, key=len, reverse=True))
    units = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
    return _Patterns(
        re.compile(  # "$1.25-$1.50", "€5-10"
            rf"(?<![\w$])(?P<neg>-)?(?:(?P<sym>{sym})|\b(?P<code>{_CODES})\b)\s?(?P<a>{num})"
            rf"\s?[-–—]\s?(?:{sym})?\s?(?P<b>{num})(?![\w%°])"
        ),
        re.compile(  # "1,25-1,50 €"
            rf"(?<![\w.,])(?P<neg>-)?(?P<a>{num})\s?[-–—]\s?(?P<b>{num})\s?"
            rf"(?:(?P<sym>R\$|[€£¥₹$])|(?P<code>{_CODES})\b)"
        ),
        re.compile(
            rf"(?<![\w$])(?P<neg>-)?(?:(?P<sym>{sym})|\b(?P<code>{_CODES})\b)\s?(?P<num>{num})"
            r"(?![\w])"
        ),
        re.compile(
            rf"(?<![\w.,])(?P<neg>-)?(?P<num>{num})\s?(?:(?P<sym>R\$|[€£¥₹$])|(?P<code>{_CODES})\b)"
        ),
        re.compile(
            rf"(?<![\w.,:/-])(?:(?P<sign>[-+])(?=\d))?(?P<a>{num})(?:\s?[-–—]\s?(?P<b>{num}))?"
            rf"\s?(?P<unit>{units})"
        ),
        re.compile(
            rf"(?<![\w.,])(?:(?<![^\s(\[=:/])(?P<sign>[-+])(?=\d))?(?P<a>{num})"
            rf"(?:\s?[-–—]\s?(?P<b>{num}))?(?![\w])"
        ),
    )


EU = _patterns(_NUM_EU)
HI = _patterns(_NUM_HI)
TIME_RE = re.compile(r"(?<![\w:.,])([01]?\d|2[0-3])(?::|h(?=[0-5]\d))([0-5]\d)(?![\d:])")
FR_HOUR_RE = re.compile(r"(?<![\w:.,])([01]?\d|2[0-3])\s?h(?![\w])")  # "14h"
AMP_RE = re.compile(r"\s*&\s*")
FR_GROUPS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?!\d)")  # "1 000 000"

# Dates written as ISO 8601 writes them, whole or reduced ("2024-03-05", "2024-03",
# "--03-05", "--03", "---05"; SSML's say-as dates come this way).
DATE_RE = re.compile(
    r"(?<![\w.,/-])(?:(?P<y>\d{4})-(?P<ym>\d\d)(?:-(?P<yd>\d\d))?"
    r"|--(?P<m>\d\d)(?:-(?P<md>\d\d))?|---(?P<d>\d\d))(?![\w/-]|[.,]\d)"
)
