"""Scripts and symbols the text side tells apart, written once.

Sentence pieces (text.py), normalization (normalize/) and the G2P (g2p/) each decide
by script: whether a piece holds Japanese or Chinese, how long it counts, where a
run of Latin words is, which pictographs are never read aloud. The ranges are the
bodies of character classes, to be put between brackets. Only `re` is imported:
the server imports this module.
"""

from __future__ import annotations

import re

KANA = "\u3040-\u30ff"  # hiragana and katakana, with ー
CJK_MARKS = "\u3000-\u303f"  # ideographic space, 、。「」 and the like
IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs, extension A
COMPAT_IDEOGRAPHS = "\uf900-\ufaff"
HALFWIDTH_KANA = "\uff66-\uff9f"
FULLWIDTH_FORMS = "\uff00-\uffef"  # full-width ASCII, half-width kana

# Pictographs, emoticons, flags, skin tones; miscellaneous symbols and dingbats
# (☀ ✅ ❄); arrows and stars drawn as emoji (⬆ ⭐); watch, hourglass, media keys.
PICTOGRAPHS = "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u231a\u231b\u23e9-\u23fa"
# The emoji presentation selector and the zero-width joiner that glue emoji together.
EMOJI_GLUE = "\ufe0f\u200d"

# A run of Latin words inside Japanese or Chinese text ("Home Assistant", "Wi-Fi").
LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z'’\-]*(?:[ .][A-Za-z][A-Za-z'’\-]*)*")
# Two or more spaces or tabs, left where words were taken out.
SPACE_RUN = re.compile(r"[ \t]{2,}")
