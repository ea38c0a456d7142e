"""Written forms Japanese and Chinese share: clock times, dates and ranges by digits.

The words differ (10時30分, 10点30分); what is matched is the same, written once.
"""

from __future__ import annotations

import re

# 10:30, 7:05:09; a score or ratio beyond 24:59 is left to the caller to refuse.
CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
# 2025/4/1, 2025-04-01: year 年 month 月 day 日 in Japanese and Chinese alike.
DATE = re.compile(r"(?<![\d/.-])(\d{4})([/.-])(\d{1,2})\2(\d{1,2})(?![\d/.-])")
# ISO 8601's reduced forms (SSML's say-as dates): 2025-04, --04-01, --04, ---01.
PARTIAL_DATE = re.compile(
    r"(?<![\d/.-])(?:(\d{4})-(\d\d)|--(\d\d)(?:-(\d\d))?|---(\d\d))(?![\d/-]|\.\d)"
)
# 3~5, 3〜5: a range between two numbers.
RANGE = re.compile(r"(?<=\d)\s?[~〜～]\s?(?=\d)")


def date_words(match: re.Match[str]) -> str:
    """A DATE match as 2025年4月1日, or unchanged when it is no calendar date."""
    year, month, day = match.group(1), int(match.group(3)), int(match.group(4))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group()
    return f"{year}年{month}月{day}日"


def partial_date_words(match: re.Match[str]) -> str:
    """A PARTIAL_DATE match as 2025年4月, 4月1日, 4月 or 1日 (unchanged if no such date)."""
    year, month_text = match.group(1), match.group(2) or match.group(3)
    day_text = match.group(4) or match.group(5)
    month = int(month_text) if month_text else None
    day = int(day_text) if day_text else None
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        return match.group()
    said = f"{year}年" if year else ""
    said += f"{month}月" if month is not None else ""
    return said + (f"{day}日" if day is not None else "")
