"""<say-as>: the text a number, ordinal, date, time, telephone number or spelled-out
word stands for, written so that the normalizer then reads it in the voice's language.
Plain strings in and out: the SSML parser (ssml.py) hands over the element's text."""

from __future__ import annotations

import re


def said_as(kind: str, text: str, fmt: str = "ymd") -> str:
    """What `text` in a <say-as interpret-as=`kind`> stands for (`fmt`: a date's
    order of year, month and day); ValueError, naming the problem, if it cannot be."""
    if kind in ("characters", "spell-out", "letters", "verbatim", "digits"):
        return " ".join(c.upper() if c.isalpha() else c for c in text if not c.isspace())
    if kind in ("cardinal", "number"):
        digits = re.sub(r"[^\d.\-]", "", text)
        return digits or text
    if kind == "ordinal":
        digits = re.sub(r"\D", "", text)
        if not digits or len(digits) > 15:
            raise ValueError(f"<say-as interpret-as='ordinal'>{text}</say-as>: not a number")
        return f"{digits}{_ordinal_suffix(int(digits))}"
    if kind == "date":
        return _date(text, fmt)
    if kind == "time":
        return text
    if kind in ("telephone", "phone"):
        return _telephone(text)
    raise ValueError(
        f"<say-as interpret-as={kind!r}>: use characters, cardinal, ordinal, date, time "
        "or telephone"
    )


def _ordinal_suffix(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def _date(text: str, fmt: str) -> str:
    """ "5/3/2024" with format dmy → "2024-03-05": the date written as ISO 8601 writes it
    (or its reduced forms "2024-03", "--03-05", "--03", "---05"), which every language's
    normalizer reads as a date in its own words. The voice's language is only known
    later, so no words are chosen here."""
    parts = [p for p in re.split(r"[-/.\s]+", text) if p]
    order = [c for c in fmt if c in "ymd"]
    # A year has at most four digits, a month or day two: longer is no date (and never
    # becomes an int, which Python refuses past 4,300 digits).
    widths = [4 if c == "y" else 2 for c in order]
    if (
        not order
        or len(parts) != len(order)
        or len(set(order)) != len(order)
        or not all(p.isdigit() and len(p) <= w for p, w in zip(parts, widths, strict=True))
    ):
        raise ValueError(f"<say-as interpret-as='date' format={fmt!r}>: cannot read {text!r}")
    found = dict(zip(order, (int(p) for p in parts), strict=True))
    month, day, year = found.get("m"), found.get("d"), found.get("y")
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        raise ValueError(f"<say-as interpret-as='date'>: no such date {text!r}")
    if year is not None and len(parts[order.index("y")]) == 2:  # "5/3/24"
        year += 2000 if year < 70 else 1900  # this century, or the last
    if year is not None and month is not None:
        said = f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day is not None else "")
    elif year is not None and day is not None:
        raise ValueError(f"<say-as interpret-as='date' format={fmt!r}>: a day needs its month")
    elif year is not None:
        said = f"{year}"  # a year alone: its number
    elif month is not None:
        said = f"--{month:02d}" + (f"-{day:02d}" if day is not None else "")
    else:
        said = f"---{day:02d}"
    return said


def _telephone(text: str) -> str:
    """Digits one by one, groups apart: "+1 555-0100" → "plus 1, 5 5 5, 0 1 0 0"."""
    groups = [g for g in re.split(r"[^\d+]+", text) if g]
    said = []
    for group in groups:
        prefix = "plus " if group.startswith("+") else ""
        said.append(prefix + " ".join(c for c in group if c.isdigit()))
    return ", ".join(said)
