"""Characters no normalizer or G2P should meet as written: other scripts' digits, styled
letters, and "words" too long for anyone to listen to.

Both are done first, whatever the language, so no later pass needs to know of them.
"""

from __future__ import annotations

import re
import unicodedata

from wyoming_kokoro.text.long_runs import MAX_RUN, RUN_HEAD, bound_runs

__all__ = ["MAX_RUN", "RUN_HEAD", "ascii_digits", "bound_runs", "plain_letters"]

# Every decimal digit (Unicode's Nd: Arabic-Indic ٣, Persian ۳, Thai ๓, Devanagari ३, ...)
# but ASCII's own: the passes and the G2Ps read ASCII digits; some raise on the others.
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")

# Letters and digits styled with Unicode's look-alikes (Mathematical Alphanumeric
# Symbols 𝕳𝖊𝖑𝖑𝖔 𝐁𝐨𝐥𝐝, full-width ｆｕｌｌ): the G2Ps spell them out one by one. Only these
# ranges: other compatibility forms (m², Japanese and Chinese full-width punctuation)
# are read by later passes as they are.
_STYLED = re.compile("[\U0001d400-\U0001d7ff]+")
_FULL_WIDTH = re.compile("[\uff01-\uff5e]+")


def ascii_digits(text: str) -> str:
    """Every decimal digit of any script as its ASCII digit: "٣" -> "3"."""
    return _OTHER_DIGIT.sub(lambda m: str(unicodedata.decimal(m[0])), text)


def plain_letters(text: str, full_width: bool = True) -> str:
    """Styled letters and digits as plain ones: "𝕳𝖊𝖑𝖑𝖔" -> "Hello" (and "ｆｕｌｌ" ->
    "full" unless `full_width` is False: Japanese and Chinese read those themselves)."""
    text = _STYLED.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)
    if full_width:
        text = _FULL_WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)
    return text
