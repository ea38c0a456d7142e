"""Mandarin written forms → Chinese words (numbers in characters) for g2p_zh.

cn2an (a maintained converter that ships no model) turns Arabic numbers into
Chinese ones, with decimals, percentages, negatives and years ("2024年" 二零二四年).
Before it runs, forms it does not know are rewritten: clock times, slashed dates,
currency signs, °C, thousands separators, and long digit strings (phone numbers,
read digit by digit). "2" before a measure word is 两, as people say it.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable

from wyoming_kokoro.text.normalize.cjk import (
    CLOCK,
    DATE,
    PARTIAL_DATE,
    RANGE,
    date_words,
    partial_date_words,
)
from wyoming_kokoro.text.normalize.passes import run_passes

_LOGGER = logging.getLogger(__name__)

# Starts only where a number starts: inside a long run of digits a pattern would
# rescan the run from every digit (quadratic in the run's length).
_NUM = r"(?<!\d)\d+(?:\.\d+)?"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CURRENCY_BEFORE = re.compile(rf"([¥$€£])\s?({_NUM})(?:\s?(万|亿))?")
_CURRENCY = {"¥": "元", "$": "美元", "€": "欧元", "£": "英镑"}
_CELSIUS = re.compile(rf"({_NUM})\s?°\s?C")
_DEGREE = re.compile(rf"({_NUM})\s?°")
_DIGITS = re.compile(r"(?<![\d.])(?:0\d{4,}|\d{8,})(?![\d.])")
_DIGIT_WORDS = dict(zip("0123456789", "零一二三四五六七八九", strict=True))
# cn2an reads at most 16 digits (it drops the rest of a longer fraction): longer
# numbers are spelled digit by digit before it runs.
_LONG_NUMBER = re.compile(r"\d{17,}(?:\.\d+)?|\d+\.\d{17,}")
# 两 rather than 二 for a lone 2 before a measure word or an hour.
_LIANG = re.compile(r"(?<![\d.])2(?=\s?[个位只次本张条件种名家点天年台辆杯瓶块岁周])")


def _time(match: re.Match[str]) -> str:
    hours, minutes, seconds = int(match.group(1)), int(match.group(2)), match.group(3)
    if hours > 24 or minutes > 59:
        return match.group()
    words = ("两" if hours == 2 else str(hours)) + "点"
    if minutes:
        words += f"零{minutes}分" if minutes < 10 else f"{minutes}分"
    if seconds and int(seconds):
        words += f"{int(seconds)}秒"
    return words


def _spelled(match: re.Match[str]) -> str:
    """Digits one by one in characters, a decimal point as 点."""
    return "".join(_DIGIT_WORDS.get(c, "点") for c in match.group())


def _numbers(text: str) -> str:
    import cn2an  # only the worker that speaks Chinese pays for it

    try:
        return str(cn2an.transform(text, "an2cn"))
    except Exception as err:  # cn2an raises bare ValueErrors on odd numbers
        _LOGGER.debug("cn2an could not convert %r: %s", text, err)
        return text


# The passes in order; each is contained (passes.py).
_PASSES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("width", lambda text: unicodedata.normalize("NFKC", text)),
    ("thousands", lambda text: _THOUSANDS.sub("", text)),
    ("dates", lambda text: PARTIAL_DATE.sub(partial_date_words, DATE.sub(date_words, text))),
    ("clock times", lambda text: CLOCK.sub(_time, text)),
    ("currency", lambda text: _CURRENCY_BEFORE.sub(
        lambda m: f"{m.group(2)}{m.group(3) or ''}{_CURRENCY[m.group(1)]}", text)),
    ("degrees", lambda text: _DEGREE.sub(r"\1度", _CELSIUS.sub(r"\1摄氏度", text))),
    ("long numbers", lambda text: _DIGITS.sub(_spelled, _LONG_NUMBER.sub(_spelled, text))),
    ("liang", lambda text: _LIANG.sub("两", text)),
    ("ranges", lambda text: RANGE.sub("到", text)),
    ("numbers", _numbers),
)  # fmt: skip


def normalize_chinese(text: str) -> str:
    """Written Mandarin → characters a reader would say, numbers included."""
    return run_passes(text, _PASSES, "Chinese")
