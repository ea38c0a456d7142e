"""Characters no normalizer or G2P should meet as written: other scripts' digits, and
"words" too long for anyone to listen to.

Both are done first, whatever the language, so no later pass needs to know of them.
"""

from __future__ import annotations

import re
import unicodedata

from wyoming_kokoro.text.charsets import (
    CJK_MARKS,
    COMPAT_IDEOGRAPHS,
    FULLWIDTH_FORMS,
    IDEOGRAPHS,
    KANA,
)

# Every decimal digit (Unicode's Nd: Arabic-Indic ٣, Persian ۳, Thai ๓, Devanagari ३, ...)
# but ASCII's own: the passes and the G2Ps read ASCII digits; some raise on the others.
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")

# A run of characters without a space this long is no word: a hash, a base64 blob, a
# digit string, a pasted token. Nobody listens to it whole (a long one took minutes
# to say), so its first characters are read and the rest skipped,
# marked with an ellipsis (a pause in every language, no words to translate). Long
# enough that real words, long URLs and numbers of any sane length are read in full.
MAX_RUN = 100
# More digits than any language here reads as one number: a cut digit string is still
# read digit by digit, never as a made-up quantity.
RUN_HEAD = 20
# Scripts written without spaces between words are long runs by nature: not counted.
_NO_SPACE_SCRIPTS = (
    f"{KANA}{IDEOGRAPHS}{COMPAT_IDEOGRAPHS}{CJK_MARKS}{FULLWIDTH_FORMS}"
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
)
_LONG_RUN = re.compile(rf"[^\s{_NO_SPACE_SCRIPTS}]{{{MAX_RUN + 1},}}")
# A long link keeps its address up to the host: the host is what a listener can use,
# and the URL pass reads it as usual.
_LINK_HOST = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)[^/?#\s]+", re.IGNORECASE)


def ascii_digits(text: str) -> str:
    """Every decimal digit of any script as its ASCII digit: "٣" -> "3"."""
    return _OTHER_DIGIT.sub(lambda m: str(unicodedata.decimal(m[0])), text)


def bound_runs(text: str) -> str:
    """Each run of more than MAX_RUN characters without a space cut to its first
    RUN_HEAD characters and an ellipsis (a link: up to its host)."""
    return _LONG_RUN.sub(_head, text)


def _head(match: re.Match[str]) -> str:
    link = _LINK_HOST.match(match[0])
    if link and len(link[0]) <= MAX_RUN:
        return link[0] + " … "
    return match[0][:RUN_HEAD] + "… "
