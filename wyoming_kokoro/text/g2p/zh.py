"""Mandarin text → Kokoro phonemes: jieba words, pypinyin, tone sandhi, misaki's IPA.

Kokoro v1.0's Chinese voices were trained on misaki's "legacy" Chinese route:
jieba words, pypinyin syllables with tone numbers, then misaki's pinyin → IPA with
tone arrows. That route reads the dictionary tone of every syllable, so 一 and 不
and runs of third tones keep tones nobody says (你好 nǐ hǎo, 一样 yī yàng). misaki's
ToneSandhi (from PaddleSpeech, shipped in the misaki wheel) applies the spoken
tones; only the tone digits change, the syllables stay pypinyin's.
jieba, pypinyin and cn2an ship their dictionaries: nothing is downloaded.
Latin words inside Chinese text go to the English G2P.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from wyoming_kokoro.text.charsets import IDEOGRAPHS, LATIN_RUN

_LOGGER = logging.getLogger(__name__)

_HAN = re.compile(f"[{IDEOGRAPHS}]+")
_TONE = re.compile(r"[1-5]$")


def _three_three(finals: list[str]) -> list[str]:
    """Two third tones in a row: the first becomes a second tone (五百 wǔ bǎi → wú bǎi).

    Longer runs (九百九 jiǔ bǎi jiǔ) change by how the words group, which this cannot
    see: they keep their tones.
    """
    three = [f.endswith("3") for f in finals]
    out = list(finals)
    for i in range(len(out) - 1):
        alone = not (i > 0 and three[i - 1]) and not (i + 2 < len(out) and three[i + 2])
        if three[i] and three[i + 1] and alone:
            out[i] = out[i][:-1] + "2"
    return out


class ChineseG2P:
    """Normalized Mandarin text (numbers already in words) → Kokoro phonemes."""

    def __init__(self, english: Callable[[str], str]) -> None:
        started = time.monotonic()
        import jieba
        import jieba.posseg
        from misaki.tone_sandhi import ToneSandhi
        from misaki.zh import ZHG2P

        jieba.setLogLevel(logging.WARNING)  # it prints its dictionary loading otherwise
        self._posseg = jieba.posseg
        self._sandhi = ToneSandhi()
        self._zh = ZHG2P
        self._english = english
        self._words("准备")  # loads jieba's dictionary now rather than mid-sentence
        _LOGGER.info("Chinese G2P loaded in %.2f s", time.monotonic() - started)

    def _words(self, text: str) -> list[str]:
        """Han text → one IPA string per word, with spoken tones."""
        return ["".join(ipa) for _, ipa in self._pairs(text)]

    def _pairs(self, text: str) -> list[tuple[str, list[str]]]:
        """Han text → its words (merged for the tone rules), each with its IPA per
        syllable (spoken tones)."""
        from pypinyin import Style, lazy_pinyin

        words = self._sandhi.pre_merge_for_modify(self._posseg.lcut(text))
        out = []
        for word, pos in words:
            syllables = lazy_pinyin(word, style=Style.TONE3, neutral_tone_with_five=True)
            finals = lazy_pinyin(word, style=Style.FINALS_TONE3, neutral_tone_with_five=True)
            if len(syllables) != len(word) or len(finals) != len(word):
                out.append((word, ["".join(self._zh.py2ipa(s) for s in syllables)]))
                continue
            spoken = self._sandhi.modified_tone(word, pos, finals)
            if len(word) > 4:  # ToneSandhi leaves long words (numbers) alone: pairwise rule
                spoken = _three_three(spoken)
            syllables = [
                _TONE.sub(final[-1], syllable) if final[-1:].isdigit() else syllable
                for syllable, final in zip(syllables, spoken, strict=True)
            ]
            out.append((word, [self._zh.py2ipa(s) for s in syllables]))
        return out

    def readings(self, text: str) -> list[tuple[str, str]]:
        """The text's words (jieba's, English words each alone), each with its IPA;
        punctuation is a word without phonemes."""
        out: list[tuple[str, str]] = []
        last = 0
        for match in LATIN_RUN.finditer(text):
            out += self._han_readings(text[last : match.start()])
            out += [(word, self._english(word)) for word in match.group().split()]
            last = match.end()
        return out + self._han_readings(text[last:])

    def _han_readings(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        last = 0
        for match in _HAN.finditer(text):
            out += [(c, "") for c in text[last : match.start()] if not c.isspace()]
            # The words as jieba cut them, not as merged for the tone rules: a
            # syllable per character lets the merged ones part again.
            cut = [word for word, _ in self._posseg.lcut(match.group())]
            for word, ipa in self._pairs(match.group()):
                if len(ipa) != len(word):
                    out.append((word, "".join(ipa)))
                    continue
                while word:
                    size = len(cut[0]) if cut and word.startswith(cut[0]) else len(word)
                    out.append((word[:size], "".join(ipa[:size])))
                    word, ipa = word[size:], ipa[size:]
                    if cut and size == len(cut[0]):
                        cut.pop(0)
            last = match.end()
        return out + [(c, "") for c in text[last:] if not c.isspace()]

    def _han(self, text: str) -> str:
        # Non-Han text between Han runs is punctuation, already mapped to ASCII.
        out: list[str] = []
        last = 0
        for match in _HAN.finditer(text):
            out.append(text[last : match.start()])
            out.append(" ".join(self._words(match.group())))
            last = match.end()
        out.append(text[last:])
        return "".join(out)

    def __call__(self, text: str) -> str:
        text = self._zh.map_punctuation(text)
        out: list[str] = []
        last = 0
        for match in LATIN_RUN.finditer(text):
            out.append(self._han(text[last : match.start()]))
            out.append(" " + self._english(match.group()) + " ")
            last = match.end()
        out.append(self._han(text[last:]))
        # misaki drops the non-syllabic mark (U+032F): Kokoro's vocabulary has none.
        phonemes = re.sub(r"\s+", " ", "".join(out).replace("\u032f", "")).strip()
        # Full-width marks became ASCII in normalize_zh (NFKC): space them as misaki does.
        phonemes = re.sub(r"([,.!?;:])(?=[^\s,.!?;:”»)])", r"\1 ", phonemes)
        return re.sub(r" ([,.!?;:])", r"\1", phonemes)
