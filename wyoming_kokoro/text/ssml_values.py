"""SSML's attribute values as numbers: a break's time, a prosody rate and volume.
One out of range is clamped, one that cannot be read is the default; each such reading
is noted (by element and attribute, never the text) for the parser's one warning."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

MAX_BREAK_MS = 10_000  # one place's silence, its breaks in a row added up
_STRENGTH_MS = {
    "none": 0,
    "x-weak": 100,
    "weak": 200,
    "medium": 400,
    "strong": 700,
    "x-strong": 1000,
}
_RATES = {"x-slow": 0.5, "slow": 0.75, "medium": 1.0, "default": 1.0, "fast": 1.25, "x-fast": 1.5}
_VOLUMES = {
    "silent": 0.0,
    "x-soft": 0.25,
    "soft": 0.5,
    "medium": 1.0,
    "default": 1.0,
    "loud": 1.5,
    "x-loud": 2.0,
}
_MIN_RATE, _MAX_RATE = 0.1, 10.0  # a prosody rate beyond them is clamped
_MAX_DB = 40.0

# No unit is milliseconds, as Alexa and Google read it.
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$", re.IGNORECASE)


def break_ms(element: ET.Element, notes: list[str]) -> int:
    """A break's time; one that cannot be read is the default (medium) break."""
    time = element.get("time")
    if time is not None:
        match = _TIME.match(time)
        if match:
            unit = (match.group(2) or "ms").lower()
            value = float(match.group(1)) * (1 if unit == "ms" else 1000)
            return int(min(value, MAX_BREAK_MS))
        note(notes, "<break time>")
        return _STRENGTH_MS["medium"]
    strength = element.get("strength", "medium").strip().lower()
    if strength not in _STRENGTH_MS:
        note(notes, "<break strength>")
        strength = "medium"
    return _STRENGTH_MS[strength]


_PERCENT = re.compile(r"^([+-]?)(\d+(?:\.\d+)?(?:e[+-]?\d+)?)%$")


def rate(value: str | None, notes: list[str]) -> float:
    """A prosody rate: one out of range is clamped, one that cannot be read is none."""
    if value is None:
        return 1.0
    value = value.strip().lower()
    if value in _RATES:
        return _RATES[value]
    match = _PERCENT.match(value)
    try:
        if match:
            number = float(match.group(2)) / 100
            rate = 1 + number if match.group(1) == "+" else 1 - number if match.group(1) else number
        else:
            rate = float(value)
    except ValueError:
        rate = float("nan")
    if rate != rate:  # nan: no rate at all
        note(notes, "<prosody rate>")
        return 1.0
    if not _MIN_RATE <= rate <= _MAX_RATE:
        note(notes, "<prosody rate>")
    return min(max(rate, _MIN_RATE), _MAX_RATE)


_DB = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*db$")


def volume(value: str | None, notes: list[str]) -> float:
    """A prosody volume: dB beyond ±40 are clamped, one that cannot be read is none."""
    if value is None:
        return 1.0
    value = value.strip().lower()
    if value in _VOLUMES:
        return _VOLUMES[value]
    match = _DB.match(value)
    if not match:
        note(notes, "<prosody volume>")
        return 1.0
    db = float(match.group(1))
    if abs(db) > _MAX_DB:
        note(notes, "<prosody volume>")
    return float(10 ** (min(max(db, -_MAX_DB), _MAX_DB) / 20))


def note(notes: list[str], what: str) -> None:
    """Note `what` (an element or attribute) was read plainly, once."""
    if what not in notes:
        notes.append(what)
