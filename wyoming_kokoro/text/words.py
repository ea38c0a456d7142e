"""The user's written words matched to the phonemes the model says.

Normalization and the G2P rewrite a piece ("21°C" becomes "twenty one degrees
Celsius"), so what each written word became is found by alignment, not by counting:
every word is read alone (its expected phonemes) and the expected phonemes of all
words, in order, are aligned with the phonemes the model was given, letter by letter,
stress and length marks left out. A word owns the stretch of the model's phonemes its
letters matched, widened to the spaces around it. A word that few of its letters
matched gets no stretch: it is reported as unmatched, never given a guessed time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyoming_kokoro.text.g2p import CJK_LANGUAGES, has_cjk

if TYPE_CHECKING:
    from wyoming_kokoro.text.g2p import Phonemizer

# What the alignment ignores: stress, length, tones, spaces and punctuation differ
# between a word read alone and in its sentence, the sounds much less.
_MARKS = frozenset("ˈˌːˑ ↗↘→↓↑-–—,.!?;:…\"'“”«»()[]")
# No more than this share of a word's sounds found in the sentence: the word is unmatched.
_MATCHED = 0.5
_PUNCTUATION = re.compile(r"^[\W_]+$")


@dataclass(frozen=True)
class Reading:
    """A written word and the phonemes it is read as alone ("" if it is not spoken)."""

    word: str
    phonemes: str


@dataclass(frozen=True)
class Stretch:
    """Where a written word is in the model's phonemes: `first` to `last` (inclusive)
    index the phonemes it was aligned with; None for both if it has none."""

    word: str
    first: int | None
    last: int | None
    matched: bool  # False: spoken, but its phonemes could not be found


def split_words(piece: str, lang: str) -> list[str]:
    """The written words of a spaced language: what lies between spaces."""
    return piece.split()


def spoken_sounds(phonemes: str) -> list[int]:
    """Indexes of the letters of `phonemes` that the alignment compares."""
    return [i for i, p in enumerate(phonemes) if p not in _MARKS]


def align(readings: list[Reading], spoken: str) -> list[Stretch]:
    """Each reading's stretch of `spoken` (the phonemes the model is given, in order)."""
    expected: list[str] = []
    owner: list[int] = []
    for index, reading in enumerate(readings):
        for p in reading.phonemes:
            if p not in _MARKS:
                expected.append(p)
                owner.append(index)
    where = spoken_sounds(spoken)
    said = [spoken[i] for i in where]
    found: dict[int, list[int]] = {}
    matcher = difflib.SequenceMatcher(None, expected, said, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            found.setdefault(owner[a + k], []).append(where[b + k])
    wanted = [sum(1 for p in r.phonemes if p not in _MARKS) for r in readings]
    ranges: list[tuple[int, int] | None] = []
    for index, count in enumerate(wanted):
        hits = found.get(index, [])
        ranges.append((hits[0], hits[-1]) if count and len(hits) > _MATCHED * count else None)
    ranges = _widened(_lone_gaps(ranges, wanted, spoken), spoken)
    return [
        Stretch(
            r.word,
            span[0] if span else None,
            span[1] if span else None,
            matched=span is not None or not wanted[i],
        )
        for i, (r, span) in enumerate(zip(readings, ranges, strict=True))
    ]


def _lone_gaps(
    ranges: list[tuple[int, int] | None], wanted: list[int], spoken: str
) -> list[tuple[int, int] | None]:
    """A spoken word alone between two found ones (or an end) owns the sounds between
    them: read alone it differed ("kg" alone is letters, after "2.5" it is kilograms),
    but nothing else can have said them."""
    out = list(ranges)
    placed = [i for i, r in enumerate(out) if r is not None]
    for before, after in zip([-1, *placed], [*placed, len(out)], strict=True):
        between = [k for k in range(before + 1, after) if wanted[k]]
        if len(between) != 1:
            continue
        low = out[before][1] + 1 if before >= 0 else 0  # type: ignore[index]
        high = out[after][0] - 1 if after < len(out) else len(spoken) - 1  # type: ignore[index]
        spaces = [i for i in range(low, high + 1) if spoken[i] == " "]
        if len(spaces) >= 2 or (spaces and (before < 0 or after == len(out))):
            # Its neighbours' own unmatched ends stay theirs: only whole words between.
            low = spaces[0] if before >= 0 else low
            high = spaces[-1] if after < len(out) else high
        sounds = [i for i in range(low, high + 1) if spoken[i] not in _MARKS]
        if sounds:
            out[between[0]] = (sounds[0], sounds[-1])
    return out


def _widened(ranges: list[tuple[int, int] | None], spoken: str) -> list[tuple[int, int] | None]:
    """Each stretch widened over the unmatched letters next to it, up to a space (a
    word boundary) or, where the gap to the next stretch has none, to its middle."""
    out = list(ranges)
    placed = [i for i, r in enumerate(out) if r is not None]
    for before, after in zip([None, *placed], [*placed, None], strict=True):
        low = out[before][1] + 1 if before is not None else 0  # type: ignore[index]
        high = out[after][0] - 1 if after is not None else len(spoken) - 1  # type: ignore[index]
        if low > high:
            continue
        gap = spoken[low : high + 1]
        spaces = [low + i for i, c in enumerate(gap) if c == " "]
        if before is not None:
            a, b = out[before]  # type: ignore[misc]
            end = spaces[0] - 1 if spaces else (high if after is None else (low + high) // 2)
            out[before] = (a, max(b, _last_sound(spoken, b, end)))
        if after is not None:
            a, b = out[after]  # type: ignore[misc]
            begin = spaces[-1] + 1 if spaces else (low if before is None else (low + high) // 2 + 1)
            out[after] = (min(a, _first_sound(spoken, begin, a)), b)
    return out


def _last_sound(spoken: str, low: int, high: int) -> int:
    """The last letter in low..high that is a sound (not a mark), else `low`."""
    for i in range(high, low, -1):
        if spoken[i] not in _MARKS:
            return i
    return low


def _first_sound(spoken: str, low: int, high: int) -> int:
    """The first letter in low..high that is a sound or a stress mark, else `high`."""
    for i in range(low, high):
        if spoken[i] not in _MARKS or spoken[i] in "ˈˌ":
            return i
    return high


def cjk_words(piece: str, lang: str) -> bool:
    """Whether the piece's words come from the Japanese or Chinese G2P's own words."""
    return lang in CJK_LANGUAGES and has_cjk(piece)


def glued(readings: list[Reading], space: str = "") -> list[Reading]:
    """Punctuation written after a word (、。!) joined to it: a caption shows it there."""
    out: list[Reading] = []
    for reading in readings:
        if out and _PUNCTUATION.match(reading.word) and not spoken_sounds(reading.phonemes):
            last = out[-1]
            out[-1] = Reading(last.word + space + reading.word, last.phonemes)
        else:
            out.append(reading)
    return out


def readings(
    piece: str,
    lang: str,
    phonemes: Callable[[str, str], str],
    phonemizer: Phonemizer,
    normalized: bool = True,
) -> list[Reading]:
    """The piece's written words, each with its phonemes: a spaced language's words
    each read alone (`phonemes`: normalized, then phonemized); Japanese and Chinese
    words as their G2P reads them in the sentence, on the written characters each covers."""
    if not cjk_words(piece, lang):
        words = split_words(piece, lang)
        return glued([Reading(word, phonemes(word, lang)) for word in words], " ")
    if normalized:
        from wyoming_kokoro.text.normalize import normalize

        said = normalize(piece, lang)
    else:
        said = piece
    return glued(rewritten(piece, phonemizer.readings(said, lang), said))


def rewritten(written: str, words: list[tuple[str, str]], said: str) -> list[Reading]:
    """Readings of `said` (the written text normalized: "10:30" said "10時30分")
    given the written characters each covers. A word of `said` that covers none (a
    counter the normalizer added) joins the word before it."""
    source = _sources(written, said)
    starts: list[int | None] = []
    at = 0
    for surface, _ in words:
        while at < len(said) and said[at].isspace():
            at += 1
        if surface and said.startswith(surface, at):
            starts.append(source[at])
            at += len(surface)
        elif at < len(said) and said[at].isdigit() and _NUMERAL.fullmatch(surface):
            # The G2P writes digits as numerals ("30": 三 十): the first takes them all.
            starts.append(source[at])
            at = _DIGITS.match(said, at).end()  # type: ignore[union-attr]
        else:
            starts.append(None)
    out: list[Reading] = []
    begins: list[int] = []
    for (_, ipa), start in zip(words, starts, strict=True):
        inside = start is not None and start > 0 and _inside_token(written, start)
        if start is None or inside or (begins and start <= begins[-1]):
            if out:
                out[-1] = Reading(out[-1].word, f"{out[-1].phonemes} {ipa}".strip())
            continue
        out.append(Reading("", ipa))
        begins.append(start)
    if not out:
        return [Reading(written.strip(), " ".join(ipa for _, ipa in words))]
    begins[0] = 0
    ends = [*begins[1:], len(written)]
    return [
        Reading(written[a:b].strip(), r.phonemes)
        for r, a, b in zip(out, begins, ends, strict=True)
        if written[a:b].strip()
    ]


_NUMERAL = re.compile(r"[0-9０-９〇一二三四五六七八九十百千万億兆零两点.]+")
_DIGITS = re.compile(r"[0-9][0-9,.]*")


def _sources(written: str, said: str) -> list[int]:
    """For each character of `said`, the written character it came from: the same
    character, or the one at its place in what the normalizer rewrote."""
    source = [0] * len(said)
    matcher = difflib.SequenceMatcher(None, written, said, autojunk=False)
    for _, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            # Added characters ("10:30" said "10時30分": 分) belong to the one before.
            spread = i1 + (j - j1) * (i2 - i1) // (j2 - j1) if i2 > i1 else i1 - 1
            source[j] = max(0, spread)
    return source


_TOKEN = re.compile(r"[0-9A-Za-z:.,/%°$¥€£+\-]")


def _inside_token(written: str, at: int) -> bool:
    """Whether `at` is inside a written number or Latin word ("10:30", "21°C"): one
    caption word, however the G2P cut it."""
    return bool(_TOKEN.match(written[at - 1]) and _TOKEN.match(written[at]))
