"""A forced aligner, independent of the model and of Whisper: where each spoken word
starts in the audio, for word times to be judged against (tests and bench/).

PocketSphinx's US English acoustic model and dictionary come in its wheel. It aligns
the words the model was given to say (the normalized text, as the dictionary spells
them) with the audio, in 10 ms frames, and places a silence between two words
wherever it hears one. English only.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from support.judge import to_16k
from wyoming_kokoro.text.normalize import normalize

_FILLERS = ("<s>", "</s>", "<sil>", "[NOISE]")


def spoken_words(text: str) -> list[str]:
    """What the model is given to say, as the aligner's dictionary spells words."""
    return re.findall(r"[a-z']+", normalize(text, "en-us").lower().replace("-", " "))


class Aligner:
    def __init__(self) -> None:
        from pocketsphinx import Decoder

        self._decoder = Decoder(samprate=16000, loglevel="FATAL")

    def starts(
        self, audio: np.ndarray, text: str, rate: int = 24000
    ) -> list[tuple[str, float, bool]] | None:
        """Each spoken word with its start (seconds) and whether a silence (or the
        start of the audio) comes before it; None if a word is not in the dictionary."""
        words = spoken_words(text)
        if any(self._decoder.lookup_word(w) is None for w in words):
            return None
        pcm = (to_16k(audio, rate) * 32767).astype(np.int16).tobytes()
        self._decoder.set_align_text(" ".join(words))
        self._decoder.start_utt()
        self._decoder.process_raw(pcm, full_utt=True)
        self._decoder.end_utt()
        out, paused = [], True
        for segment in self._decoder.seg():
            if segment.word in _FILLERS:
                paused = paused or segment.word == "<sil>"
                continue
            out.append((segment.word.split("(")[0], segment.start_frame / 100, paused))
            paused = False
        return out


def letters(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def pairs(
    ours: Sequence[tuple[str, float | None]], theirs: Sequence[tuple[str, float | None]]
) -> dict[int, int]:
    """Index of their word for each word of ours (by index) that begins on the same
    aligned letter as one of theirs."""

    def flat(words: Sequence[tuple[str, float | None]]) -> tuple[str, dict[int, int]]:
        text, firsts = "", {}
        for index, (word, start) in enumerate(words):
            found = letters(word)
            if found and start is not None:
                firsts[len(text)] = index
            text += found
        return text, firsts

    a, a_words = flat(ours)
    b, b_words = flat(theirs)
    out = {}
    for i, j, size in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(size):
            if i + k in a_words and j + k in b_words:
                out[a_words[i + k]] = b_words[j + k]
    return out


def aligned_pairs(
    ours: list[tuple[str, float | None]], aligned: list[tuple[str, float, bool]]
) -> dict[int, int]:
    """The aligned word (by index) for each written word (by index) that begins on
    its first letter, the written word read as the model reads it."""
    spoken = [(normalize(word, "en-us"), start) for word, start in ours]
    return pairs(spoken, [(w, t) for w, t, _ in aligned])


def against_aligner(
    ours: list[tuple[str, float | None]], aligned: list[tuple[str, float, bool]]
) -> tuple[list[float], list[float]]:
    """Start differences (ours less the aligner's) of the words that begin on the
    same letter as an aligned word, as they are said: run on, and after a silence."""
    running: list[float] = []
    paused: list[float] = []
    for i, j in aligned_pairs(ours, aligned).items():
        if (mine := ours[i][1]) is not None:
            (paused if aligned[j][2] else running).append(mine - aligned[j][1])
    return running, paused
