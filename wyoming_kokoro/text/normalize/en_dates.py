"""English dates, times, years and decades."""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import MappingProxyType

from wyoming_kokoro.text.normalize.en_words import (
    ONES,
    cardinal,
    keep_period,
    ordinal,
    plural,
    year,
)

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_MONTH_KEYS = MappingProxyType(
    {**{name.lower(): i for i, name in enumerate(MONTHS, 1)},
     **{name[:3].lower(): i for i, name in enumerate(MONTHS, 1)}, "sept": 9}
)  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAY_KEYS = MappingProxyType(
    {**{name.lower(): name for name in _WEEKDAYS}, **{name[:3].lower(): name for name in _WEEKDAYS},
     "tues": "Tuesday", "weds": "Wednesday", "thur": "Thursday", "thurs": "Thursday"}
)  # fmt: skip
# "Sat", "Sun", "Wed", "Mon" are also words: these abbreviations are the only safe ones alone.
_SAFE_WEEKDAY_ABBR = ("Tue", "Tues", "Thu", "Thur", "Thurs", "Fri", "Weds")


def _alternatives(keys: Iterable[str]) -> str:
    """Capitalized and UPPER forms only: lowercase "may" or "sat" are too often plain words."""
    forms = {form for key in keys for form in (key.capitalize(), key.upper())}
    return "(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")"


_MON = _alternatives(_MONTH_KEYS)
_WD = _alternatives(_WEEKDAY_KEYS)
_YEAR = r"(?:1[1-9]\d\d|20\d\d)"
_DAY_SUFFIX = r"(?:st|nd|rd|th)?"

_ISO_DATE_RE = re.compile(r"(?<![\w.-])(\d{4})-(\d\d)-(\d\d)(?:(T)(?=\d)|(?![\w-]))")
# ISO 8601's reduced forms: "2024-03" (a month), "--03-05" (a day of no year), "--03",
# "---05". SSML's <say-as interpret-as="date"> writes its dates this way.
_ISO_PART_RE = re.compile(
    r"(?<![\w.-])(?:(?P<y>\d{4})-(?P<ym>\d\d)|--(?P<m>\d\d)(?:-(?P<md>\d\d))?|---(?P<d>\d\d))"
    r"(?![\w-]|\.\d)"
)
_NUMERIC_DATE_RE = re.compile(r"(?<![\w./-])(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d\d)(?![\w/]|\.\d)")
_CONTEXT_DATE_RE = re.compile(
    rf"\b(?:(?P<wd>{_WD})\.?,?|(?P<kw>[Oo]n|by|due|from|until|till|since|before|after))\s+"
    r"(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/]|\.\d)"
)
# One pass for all written-month dates, so that no output is read again as part of
# another date. Each branch opens on a digit or a month name rather than a look-behind,
# which keeps the scan fast; a word character before a month name is checked in _named.
_YEAR_END = r"(?![\w:]|-\d)"
_NAMED_DATE_RE = re.compile(
    rf"(?P<d1>\d(?<![\w.:/-]\d)\d?)(?!\d){_DAY_SUFFIX}\s+(?:of\s+)?(?P<m1>{_MON})\b"
    rf"(?:\.(?=,?\s+\d))?(?:,?\s+(?P<y1>{_YEAR}){_YEAR_END})?"  # "2 Dec 2025"
    rf"|(?P<m2>{_MON})\b(?:\.(?=\s*\d))?\s+(?:"
    rf"(?:the\s+)?(?P<d2>\d{{1,2}}){_DAY_SUFFIX}(?![\w:]|[.,]\d)"
    rf"(?:,?\s+(?P<y2>{_YEAR}){_YEAR_END})?"  # "Dec 2, 2025"
    rf"|(?:of\s+)?(?P<y3>{_YEAR}){_YEAR_END})"  # "December 2025"
)
_WEEKDAY_RANGE_RE = re.compile(rf"\b({_WD})\.?\s*[-–]\s*({_WD})\b")
_WEEKDAY_ABBR_RE = re.compile(
    rf"\b(?:({_WD})\.?(?=,?\s+(?:\d|{_MON}\b))"  # any weekday before a date: "Sat 10:00"
    rf"|({'|'.join(_SAFE_WEEKDAY_ABBR)})\b(?:\.(?=\s*[\d,]|\s+[a-z]))?)"
)

# Cheap pre-scans. Alternations of plain literals (and patterns opening with a character
# class) let the regex engine skip ahead quickly; the full patterns cannot.
_MONTH_HINT_RE = re.compile("|".join(k[:3].capitalize() + "|" + k[:3].upper() for k in MONTHS))
_WEEKDAY_HINT_RE = re.compile("|".join(d[:3] + "|" + d[:3].upper() for d in _WEEKDAYS))
_AMPM_HINT_RE = re.compile(r"[AaPp]\.?[Mm]")
_DECADE_HINT_RE = re.compile(r"\d0['’]?s")
_FOUR_DIGITS_RE = re.compile(r"\d{4}")

_AMPM = r"(?:[AaPp]\.?[Mm]\.?)(?![\w])"
_TIME = rf"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:])(?:\s?{_AMPM})?"
_TIME_RE = re.compile(
    rf"(?<![\w:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?(?![\d:])"
    rf"(?:\s?(?P<ap>{_AMPM}))?"
)
_TIME_RANGE_RE = re.compile(rf"(?<![\w:.])({_TIME})\s*[-–]\s*({_TIME})")
_HOUR_AMPM_RE = re.compile(
    rf"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])(?:\s*[-–]\s*(?P<h2>1[0-2]|0?[1-9]))?\s?(?P<ap>{_AMPM})"
)
# "7.30pm", "1.50-2.00 pm": a clock time written with a dot (British usage), known by its am/pm.
_DOTTED_TIME_RE = re.compile(
    rf"(?<![\w:.,])(?P<h>1[0-2]|0?[1-9])\.(?P<m>[0-5]\d)"
    rf"(?:\s*[-–—]\s*(?P<h2>1[0-2]|0?[1-9])\.(?P<m2>[0-5]\d))?\s?(?P<ap>{_AMPM})"
)

_DECADE_RE = re.compile(
    r"(?:(?<![\w'’])['’](?P<short>\d0)|\b(?P<year>1[1-9]\d0|20\d0)"
    r"|\b(?P<ctx>[Tt]he|early|mid|late|her|his|their|my|your|our)(?P<sep>\s+|-)(?P<ctx_n>\d0))"
    r"['’]?s\b"
)
_YEAR_CONTEXT_RE = re.compile(
    rf"\b(?P<kw>(?i:in|since|until|till|from|between|circa|during|year|by))\s+(?P<a>{_YEAR})"
    rf"(?:(?P<sep>\s*[-–]\s*|\s+(?:to|and|until|through)\s+)(?P<b>{_YEAR}))?"
    r"(?![\w:%°]|[.,]\d)"
)


def say_date(day: int, month: int, yr: int | None, weekday: str | None, gb: bool) -> str:
    """US: "Tuesday, December second, twenty twenty-five"; GB: "Tuesday the second of ..."."""
    if gb:
        words = f"the {ordinal(day)} of {MONTHS[month - 1]}"
        if weekday:
            words = f"{weekday} {words}"
    else:
        words = f"{MONTHS[month - 1]} {ordinal(day)}"
        if weekday:
            words = f"{weekday}, {words}"
    if yr is not None:
        words += ", " + year(yr, gb)
    return words


def _weekday(key: str | None) -> str | None:
    return _WEEKDAY_KEYS[key.lower()] if key else None


def _iso(m: re.Match[str], gb: bool) -> str:
    yr, month, day = int(m[1]), int(m[2]), int(m[3])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m[0]
    return say_date(day, month, yr, None, gb) + (" at " if m[4] else "")


def _iso_part(m: re.Match[str], gb: bool) -> str:
    month = int(m["ym"] or m["m"] or 1)
    day = int(m["md"] or m["d"] or 1)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m[0]
    if m["y"]:
        return f"{MONTHS[month - 1]} {year(int(m['y']), gb)}"
    if m["md"]:
        return say_date(day, month, None, None, gb)
    return MONTHS[month - 1] if m["m"] else f"the {ordinal(day, gb)}"


def _day_month_order(a: int, b: int, day_first: bool) -> tuple[int, int]:
    """(day, month) from "a/b": the dialect's order unless only the other one can be valid."""
    day, month = (a, b) if day_first else (b, a)
    if month > 12 and day <= 12:
        day, month = month, day
    return day, month


def _numeric(m: re.Match[str], gb: bool) -> str:
    if m[2] == "." and len(m[4]) == 2:
        return m[0]  # "1.2.25" is far more often a version than a date
    # Slashes follow the dialect; dots are a continental, day-first habit.
    day, month = _day_month_order(int(m[1]), int(m[3]), gb or m[2] == ".")
    yr = int(m[4]) if len(m[4]) == 4 else int(m[4]) + (2000 if int(m[4]) < 70 else 1900)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m[0]
    return say_date(day, month, yr, None, gb)


def _context(m: re.Match[str], gb: bool) -> str:
    day, month = _day_month_order(int(m["a"]), int(m["b"]), gb)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m[0]
    prefix = f"{m['kw']} " if m["kw"] else ""
    return prefix + say_date(day, month, None, _weekday(m["wd"]), gb)


def _named(m: re.Match[str], gb: bool) -> str:
    if m["m2"] and m.start() and m.string[m.start() - 1].isalnum():
        return m[0]  # the month name is the end of a longer word
    month = _MONTH_KEYS[(m["m1"] or m["m2"]).lower()]
    year_text = m["y1"] or m["y2"] or m["y3"]
    yr = int(year_text) if year_text else None
    if not (m["d1"] or m["d2"]):
        return f"{MONTHS[month - 1]} {year(yr or 0, gb)}"
    day = int(m["d1"] or m["d2"])
    if not 1 <= day <= 31:
        return m[0]
    if m["d1"] and m.string[max(0, m.start() - 4) : m.start()].lower() == "the ":
        # "on the 2nd of December": keep the writer's "the", in both dialects.
        words = f"{ordinal(day)} of {MONTHS[month - 1]}"
        return words + (", " + year(yr, gb) if yr is not None else "")
    return say_date(day, month, yr, None, gb)


def _minutes(minute: int) -> str:
    return f"oh {ONES[minute]}" if minute < 10 else cardinal(minute)


def _ampm(text: str) -> str:
    return "a m" if text[0] in "Aa" else "p m"  # spaced so the voice says the letters


def _time(m: re.Match[str], gb: bool) -> str:
    hour, minute = int(m["h"]), int(m["m"])
    if m["ap"]:
        words = cardinal(hour, gb) + (f" {_minutes(minute)}" if minute else "")
        words += " " + _ampm(m["ap"]) + keep_period(m)
    elif minute == 0:
        if hour == 0:
            words = "midnight"
        else:
            words = cardinal(hour, gb) + (" o'clock" if hour <= 12 else " hundred")
    else:
        # "00:30" is said on the 12-hour clock; other hours as written.
        words = "twelve" if hour == 0 else cardinal(hour, gb)
        words += f" {_minutes(minute)}" + (" a m" if hour == 0 else "")
    if m["s"] and int(m["s"]):
        sec = int(m["s"])
        words += f" and {cardinal(sec, gb)} second{'s' if sec != 1 else ''}"
    return words


def _time_range(m: re.Match[str], gb: bool) -> str:
    first = _TIME_RE.sub(lambda t: _time(t, gb), m[1])
    return f"{first} to {_TIME_RE.sub(lambda t: _time(t, gb), m[2])}"


def _dotted_time(m: re.Match[str], gb: bool) -> str:
    def said(hour: str, minute: str) -> str:
        return cardinal(int(hour), gb) + (f" {_minutes(int(minute))}" if int(minute) else "")

    words = said(m["h"], m["m"]) + (f" to {said(m['h2'], m['m2'])}" if m["h2"] else "")
    return f"{words} {_ampm(m['ap'])}{keep_period(m)}"


def _hour_ampm(m: re.Match[str], gb: bool) -> str:
    words = cardinal(int(m["h"]), gb)
    if m["h2"]:
        words += " to " + cardinal(int(m["h2"]), gb)
    return f"{words} {_ampm(m['ap'])}{keep_period(m)}"


def _decade(m: re.Match[str], gb: bool) -> str:
    if m["short"]:
        return plural(cardinal(int(m["short"])))
    if m["year"]:
        return plural(year(int(m["year"]), gb))
    return f"{m['ctx']}{m['sep']}{plural(cardinal(int(m['ctx_n'])))}"


def _year_context(m: re.Match[str], gb: bool) -> str:
    words = f"{m['kw']} {year(int(m['a']), gb)}"
    if m["b"]:
        sep = m["sep"].strip()
        words += f" {'to' if sep in '-–' else sep} {year(int(m['b']), gb)}"
    return words


def dates_and_times(text: str, gb: bool) -> str:
    """Dates first (they hold numbers that look like ranges), then clock times.

    Each pass is skipped when a cheap scan shows it cannot match: most
    announcements hold a number or two, not a calendar.
    """
    # Written month names first: the numeric forms below produce month names of their own,
    # which a number just before them must not be read into ("5 of 2025-12-02").
    if _MONTH_HINT_RE.search(text):
        text = _NAMED_DATE_RE.sub(lambda m: _named(m, gb), text)
    if "-" in text:
        text = _ISO_DATE_RE.sub(lambda m: _iso(m, gb), text)
        text = _ISO_PART_RE.sub(lambda m: _iso_part(m, gb), text)
    if "/" in text or "." in text:
        text = _NUMERIC_DATE_RE.sub(lambda m: _numeric(m, gb), text)
        text = _CONTEXT_DATE_RE.sub(lambda m: _context(m, gb), text)
    if ":" in text:
        text = _TIME_RANGE_RE.sub(lambda m: _time_range(m, gb), text)
        text = _TIME_RE.sub(lambda m: _time(m, gb), text)
    if _AMPM_HINT_RE.search(text):
        if "." in text:
            text = _DOTTED_TIME_RE.sub(lambda m: _dotted_time(m, gb), text)
        text = _HOUR_AMPM_RE.sub(lambda m: _hour_ampm(m, gb), text)
    if _DECADE_HINT_RE.search(text):
        text = _DECADE_RE.sub(lambda m: _decade(m, gb), text)
    return text


def weekdays(text: str) -> str:
    """Expand weekday abbreviations: "Mon-Fri" -> "Monday to Friday", "Tue 2" -> "Tuesday 2"."""
    if not _WEEKDAY_HINT_RE.search(text):
        return text
    text = _WEEKDAY_RANGE_RE.sub(lambda m: f"{_weekday(m[1])} to {_weekday(m[2])}", text)
    return _WEEKDAY_ABBR_RE.sub(lambda m: _weekday(m[1] or m[2]) or m[0], text)


def years(text: str, gb: bool) -> str:
    """Four digits read as a year only where the words around say so ("in 1999")."""
    if not _FOUR_DIGITS_RE.search(text):
        return text
    return _YEAR_CONTEXT_RE.sub(lambda m: _year_context(m, gb), text)
