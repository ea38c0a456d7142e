"""Phonemes written into the text (SSML <phoneme>), carried to the G2P untouched.

They travel between two private-use characters, which the normalizer and the G2P
step over: text → scheduler → worker needs no other channel.
"""

from __future__ import annotations

import re
from collections.abc import Callable

PHONEMES_OPEN = "\ue000"
PHONEMES_CLOSE = "\ue001"
_SPAN = re.compile(f"{PHONEMES_OPEN}([^{PHONEMES_CLOSE}]*){PHONEMES_CLOSE}")

# IPA as dictionaries write it → Kokoro's (misaki's) phoneme set: its diphthongs are
# single letters, its r is ɹ, its g the IPA one; length marks and tie bars go.
_IPA = (
    ("t͡ʃ", "ʧ"),
    ("d͡ʒ", "ʤ"),
    ("tʃ", "ʧ"),
    ("dʒ", "ʤ"),
    ("eɪ", "A"),
    ("aɪ", "I"),
    ("oʊ", "O"),
    ("əʊ", "Q"),
    ("aʊ", "W"),
    ("ɔɪ", "Y"),
    ("ɝ", "ɜɹ"),
    ("ɚ", "əɹ"),
    ("r", "ɹ"),
    ("g", "ɡ"),
    ("ː", ""),
    ("͡", ""),
    ("'", "ˈ"),
)


def from_ipa(ipa: str) -> str:
    """IPA → Kokoro phonemes (what a <phoneme alphabet="ipa"> says)."""
    text = ipa.strip().strip("/[]")
    for old, new in _IPA:
        text = text.replace(old, new)
    return text


def split(text: str) -> list[tuple[str, bool]]:
    """(part, is_phonemes) in order; a text without markers is one part."""
    if PHONEMES_OPEN not in text:
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    last = 0
    for match in _SPAN.finditer(text):
        parts.append((text[last : match.start()], False))
        parts.append((match.group(1), True))
        last = match.end()
    parts.append((text[last:].replace(PHONEMES_OPEN, " "), False))
    return [(p, ph) for p, ph in parts if p.strip() or (not ph and p)]


def keep_phonemes(text: str, change: Callable[[str], str]) -> str:
    """`change(text)` applied to the text between phoneme spans only."""
    if PHONEMES_OPEN not in text:
        return change(text)
    out = []
    for part, is_phonemes in split(text):
        out.append(f"{PHONEMES_OPEN}{part}{PHONEMES_CLOSE}" if is_phonemes else change(part))
    return " ".join(p for p in out if p.strip())
