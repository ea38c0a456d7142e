"""Japanese written forms → what OpenJTalk reads correctly.

OpenJTalk (g2p_ja) reads numbers with their counters itself ("3人" さんにん,
"1,500円", "30分" さんじゅっぷん, "60%"), better than spelling them out first could.
It misreads clock times ("10:30" じゅう：さんじゅう), slashed dates, currency signs
before the number ("¥1,500", "$5"), "°C" and a minus sign; those become the words a
Japanese speaker says, written so OpenJTalk reads them ("10時30分", "1500円").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from wyoming_kokoro.text.charsets import IDEOGRAPHS, KANA
from wyoming_kokoro.text.normalize.cjk import (
    CLOCK,
    DATE,
    PARTIAL_DATE,
    RANGE,
    date_words,
    partial_date_words,
)
from wyoming_kokoro.text.normalize.passes import run_passes

# Starts only where a number starts: tried inside a long run of digits, each pattern
# would rescan the run from every digit (quadratic in the run's length).
_NUM = r"(?<!\d)(?<!\d,)\d+(?:,\d{3})*(?:\.\d+)?"
_CURRENCY_BEFORE = re.compile(rf"([¥$€£₩])\s?({_NUM})(?:\s?(万|億|兆))?")
_CURRENCY_AFTER = re.compile(rf"({_NUM})\s?([¥€£])")
_CURRENCY = {"¥": "円", "$": "ドル", "€": "ユーロ", "£": "ポンド", "₩": "ウォン"}
_CELSIUS = re.compile(rf"({_NUM})\s?°\s?C")
_FAHRENHEIT = re.compile(rf"({_NUM})\s?°\s?F")
_DEGREE = re.compile(rf"({_NUM})\s?°")
_MINUS = re.compile(r"(?<![A-Za-z0-9)])[-−](?=\d)")
_PLUS_MINUS = re.compile(r"±(?=\d)")
_PLUS = re.compile(r"(?<![A-Za-z0-9)])\+(?=\d)")
# OpenJTalk drops an ASCII full stop after Japanese (a heading that text.py closed,
# text typed with half-width marks): the sentence would lose its pause.
_PERIOD = re.compile(f"(?<=[{KANA}{IDEOGRAPHS}）」』%])\\.(?!\\d)")
# Units after a number that OpenJTalk misreads (it knows km, kg, kWh, Hz, W, %...).
_UNITS = {"GB": "ギガバイト", "MB": "メガバイト", "KB": "キロバイト", "kB": "キロバイト"}
_UNITS.update({"L": "リットル", "l": "リットル"})
_UNIT = re.compile(r"(?<=\d)\s?(" + "|".join(_UNITS) + r")(?![A-Za-z])")


def _time(match: re.Match[str]) -> str:
    hours, minutes, seconds = int(match.group(1)), int(match.group(2)), match.group(3)
    if hours > 24 or minutes > 59:
        return match.group()  # a score or a ratio, not a time
    words = f"{hours}時" + (f"{minutes}分" if minutes else "")
    if seconds and int(seconds):
        words += f"{int(seconds)}秒"
    return words


def _currency_before(text: str) -> str:
    return _CURRENCY_BEFORE.sub(
        lambda m: f"{m.group(2)}{m.group(3) or ''}{_CURRENCY[m.group(1)]}", text
    )


# The passes in order; each is contained (passes.py).
_PASSES: tuple[tuple[str, Callable[[str], str]], ...] = (
    # Full-width digits, letters and signs to ASCII, half-width kana to full width.
    ("width", lambda text: unicodedata.normalize("NFKC", text)),
    ("dates", lambda text: PARTIAL_DATE.sub(partial_date_words, DATE.sub(date_words, text))),
    ("clock times", lambda text: CLOCK.sub(_time, text)),
    ("currency before", _currency_before),
    ("currency after", lambda text: _CURRENCY_AFTER.sub(
        lambda m: f"{m.group(1)}{_CURRENCY[m.group(2)]}", text)),
    ("degrees", lambda text: _DEGREE.sub(r"\1度", _FAHRENHEIT.sub(
        r"華氏\1度", _CELSIUS.sub(r"\1度", text)))),
    ("units", lambda text: _UNIT.sub(lambda m: _UNITS[m.group(1)], text)),
    ("signs", lambda text: _PLUS.sub("プラス", _PLUS_MINUS.sub("プラスマイナス", text))),
    ("periods", lambda text: _PERIOD.sub("。", text)),
    ("minus", lambda text: _MINUS.sub("マイナス", text)),
    ("ranges", lambda text: RANGE.sub("から", text)),
)  # fmt: skip


def normalize_japanese(text: str) -> str:
    """Spell out the written forms OpenJTalk misreads; leave the rest to it."""
    return run_passes(text, _PASSES, "Japanese")
