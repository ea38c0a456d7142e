"""Written forms Japanese and Chinese share: clock times, dates and ranges by digits.

The words differ (10時30分, 10点30分); what is matched is the same, written once.
"""

from __future__ import annotations

import re

# 10:30, 7:05:09; a score or ratio beyond 24:59 is left to the caller to refuse.
CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
# 2025/4/1, 2025-04-01: year 年 month 月 day 日 in Japanese and Chinese alike.
DATE = re.compile(r"(?<![\d/.-])(\d{4})([/.-])(\d{1,2})\2(\d{1,2})(?![\d/.-])")
# 3~5, 3〜5: a range between two numbers.
RANGE = re.compile(r"(?<=\d)\s?[~〜～]\s?(?=\d)")


def date_words(match: re.Match[str]) -> str:
    """A DATE match as 2025年4月1日, or unchanged when it is no calendar date."""
    year, month, day = match.group(1), int(match.group(3)), int(match.group(4))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group()
    return f"{year}年{month}月{day}日"
