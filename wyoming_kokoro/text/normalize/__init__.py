"""Text normalization: written text to the words a person would say, before phonemization.

espeak-ng reads digits, symbols and abbreviations poorly and differently per
language, and Home Assistant announcements are full of them ("21.5 °C",
"7:30 AM", "$3.99"). normalize() spells them out for the voice's language.
Markdown is stripped before this runs (elsewhere).
"""

from __future__ import annotations

import logging
import re

from wyoming_kokoro.text.charsets import EMOJI_GLUE, PICTOGRAPHS
from wyoming_kokoro.text.g2p import base_language, language_code, reading_language
from wyoming_kokoro.text.normalize.en import normalize_english
from wyoming_kokoro.text.normalize.ja import normalize_japanese
from wyoming_kokoro.text.normalize.other import normalize_other
from wyoming_kokoro.text.normalize.runs import ascii_digits, bound_runs, plain_letters
from wyoming_kokoro.text.normalize.zh import normalize_chinese

__all__ = ["normalize"]

_LOGGER = logging.getLogger(__name__)

# The pictographs text.py takes out of pieces, and more that only get in the way when
# read aloud; text.py keeps these (they count for nothing there) for --no-normalize.
_EMOJI_RE = re.compile(
    f"[{PICTOGRAPHS}{EMOJI_GLUE}"
    "\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe\u2934\u2935\u3030\u303d"  # ▪ ▶ ◻ ⤴ 〰 〽
    "\u2122\u00ae"  # ™ ®
    "\ufe0e\u20e3"  # text presentation selector, keycap
    "\U000e0020-\U000e007f"  # tag characters of subdivision flags
    "]+"
)
# Digits grouped with (narrow) no-break spaces: "1 234" is one number.
_GROUPED_DIGITS_RE = re.compile(r"(?<=\d)[\u00a0\u202f\u2009](?=\d{3}(?!\d))")
_ODD_SPACES_RE = re.compile(r"[\u00a0\u202f\u2009\u2007]")
# Subscript digits (CO₂) and minus/hyphen look-alikes to ASCII (other scripts' decimal
# digits: runs.py); the danda (। ॥) to a full stop, which espeak-ng would drop, and
# with it the pause and fall that end a sentence.
_CHARS = str.maketrans("₀₁₂₃₄₅₆₇₈₉\u2212\u2010\u2011।॥", "0123456789---..")

# Base languages handled by normalize_other (espeak codes: "es", "fr-fr", "it", "hi").
_OTHER = frozenset({"es", "fr", "it", "hi"})


def _prepare(text: str) -> str:
    text = _EMOJI_RE.sub(" ", ascii_digits(text).translate(_CHARS))
    text = _GROUPED_DIGITS_RE.sub("", text)
    return _ODD_SPACES_RE.sub(" ", text)


def normalize(text: str, lang: str = "en-us") -> str:
    """`normalize_text`, stepping over phonemes written into the text (SSML).

    Never raises: should a normalizer fail on a piece beyond what its passes contain,
    the piece goes on as written (its overlong runs still cut), with a warning.
    """
    from wyoming_kokoro.text.g2p.inline import keep_phonemes

    try:
        return keep_phonemes(text, lambda part: normalize_text(part, lang))
    except Exception:  # a bug must not cost the listener the rest of the answer
        _LOGGER.warning("Normalizing %s failed; the piece is read as written", lang, exc_info=True)
        return bound_runs(text)


def normalize_text(text: str, lang: str = "en-us") -> str:
    """Turn written text into speakable words for ``lang`` (an espeak-style code).

    Handles en-us, en-gb (also en-gb-x-rp and the like), es, fr-fr, it, pt-br, hi, ja
    and zh; text in any other language is returned as written. Tokens that are not
    understood are left as they are, never dropped (but for the tail of a run too long
    to listen to: runs.py). Japanese or Chinese text without
    kana or ideographs is normalized as English, as the G2P then reads it as English.
    """
    code, base = language_code(lang), base_language(lang)
    # Japanese and Chinese fold full-width forms in their own passes.
    text = bound_runs(plain_letters(text, full_width=base not in ("ja", "zh")))
    if base in ("ja", "zh"):
        if reading_language(text, base) != base:
            return normalize_english(_prepare(plain_letters(text)), gb=False)
        return (normalize_japanese if base == "ja" else normalize_chinese)(_prepare(text))
    if base == "en":
        return normalize_english(_prepare(text), gb=code.startswith(("en-gb", "en-uk")))
    if code.startswith("pt-br"):
        return normalize_other(_prepare(text), "pt-br")
    if base in _OTHER:
        return normalize_other(_prepare(text), base)
    return text
