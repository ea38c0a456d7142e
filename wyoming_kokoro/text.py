"""What is spoken: markdown removal and sentence splitting, for whole and streamed text.

Text arrives either whole (`kokoro-say`, `synthesize`) or in mid-word pieces while
an LLM writes (`synthesize-chunk`). Both go through `SentenceStream`, so a
sentence is ready to speak as soon as the text after it shows that it is complete.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pysbd

from .phrases import first_phrase, opening_phrases

# Pieces shorter than this sound rushed and flat: speak them with a neighbour.
MIN_PIECE_CHARS = 24
# Longer sentences are cut at clauses: the first audio comes sooner, and another
# client waits at most one piece for its turn.
MAX_PIECE_CHARS = 240

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINE_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+")
_RULE = re.compile(r"^\s*([-*_=]\s*){3,}$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_CODE = re.compile(r"`([^`]*)`")
_EMPHASIS = re.compile(
    r"(?<![*_~\w])(\*{1,3}|_{1,3}|~~)(?=[^\s*_~])(.+?)(?<=[^\s*_~])\1(?![*_~\w])"
)
# What is left after pairing: a sentence split can cut "**bold**" in two, and a
# lone asterisk is read aloud as "asterisk". Underscores inside words stay.
_STRAY = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|~~|`+|^#+\s*|(?<=\s)#{2,}\s")
_TIMES = re.compile(r"(?<=\d)\s*[*×]\s*(?=\d)")
_HTML = re.compile(r"</?[A-Za-z][^>]{0,200}>")
# Pictographs, dingbats, flags, variation selectors, zero-width joiners.
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0001f1e6-\U0001f1ff"
    "\U0000fe0f\U0000200d\U00002b00-\U00002bff\U0000231a-\U0000231b\U000023e9-\U000023fa]+"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u00a0]+")
_ENDS_SENTENCE = re.compile(r"[.!?…。！？：；:;]['\")\]」』）]*$")
# A sentence is complete once text follows it: after Latin marks a space shows it,
# Chinese and Japanese put no space after 。！？ (closing brackets may follow).
_SENTENCE_DONE = re.compile(r"[.!?…:;]['\")\]]*\s|[。！？][」』）”]*(?=.)")
# Clause marks: Latin ones before a space, the CJK ones (、，；：) anywhere.
_CLAUSE_CUT = re.compile(r"(?<=[,;:—–])\s+|\s+(?=—)|(?<=[、，；：])\s*")
# Kana, ideographs and full-width forms: one such character says about as much as
# two Latin letters, so it counts twice towards the piece lengths.
_WIDE = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

_PYSBD_LANGS = {"en", "es", "fr", "it", "hi", "de", "nl", "ja", "zh"}


def clean_inline(text: str) -> str:
    """Remove inline markdown, HTML and emoji; keep the words."""
    text = _CONTROL.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(2):  # nested emphasis like ***bold italic*** or **_both_**
        text = _EMPHASIS.sub(r"\2", text)
    text = _HTML.sub(" ", text)
    text = _TIMES.sub(" times ", text)
    text = _STRAY.sub("", text)
    text = _EMOJI.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def _table_row(line: str) -> str:
    cells = [clean_inline(c) for c in line.strip().strip("|").split("|")]
    return ", ".join(c for c in cells if c)


class SentenceStream:
    """Turns text, fed in any pieces, into speakable pieces (sentences or clauses).

    `feed()` returns the pieces that are known to be complete; `finish()` returns
    the rest. Markdown structure (headings, list items, table rows) ends a piece;
    code blocks are skipped; very short sentences are joined to the next one.
    """

    def __init__(self, language: str = "en") -> None:
        lang = language.split("-")[0].lower()
        self._segmenter = pysbd.Segmenter(
            language=lang if lang in _PYSBD_LANGS else "en", clean=False
        )
        self._line = ""  # raw text of the line being written
        self._line_has_output = False  # a sentence of this line was already emitted
        self._in_code = False
        self._held = ""  # a short sentence waiting for a neighbour
        self._started = False  # a piece was emitted: the listener hears something
        self._head_said = 0  # characters of a sentence's head said; its rest is next

    def feed(self, chunk: str) -> list[str]:
        """Add text; return the pieces that became complete."""
        out: list[str] = []
        self._line += chunk.replace("\r\n", "\n").replace("\r", "\n")
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            out += self._finish_line(line)
        if self._line and not self._in_code and not self._waits_for_line_end():
            out += self._complete_sentences()
            if not out and not self._started and not self._held:
                out += self._opening_phrase()
        self._started = self._started or bool(out)
        return out

    def finish(self) -> list[str]:
        """End of text: return everything that is left."""
        out = self._finish_line(self._line) if self._line else []
        self._line = ""
        out += self._emit("", force=True)
        return out

    # -- lines -------------------------------------------------------------

    def _waits_for_line_end(self) -> bool:
        # Fences and table rows are only understood as whole lines.
        stripped = self._line.lstrip()
        return stripped.startswith(("```", "~~~", "|")) or stripped in ("`", "``", "~", "~~")

    def _finish_line(self, line: str) -> list[str]:
        has_output, self._line_has_output = self._line_has_output, False
        if _FENCE.match(line):
            self._in_code = not self._in_code
            return self._emit("", force=True)
        if self._in_code or _RULE.match(line) or _TABLE_SEP.match(line):
            return []
        if line.lstrip().startswith("|"):
            return self._emit(_table_row(line), boundary=True)
        if not has_output:
            line = _LINE_PREFIX.sub("", line)
        segments = self._segmenter.segment(line) if line.strip() else []
        out: list[str] = []
        for i, seg in enumerate(segments):
            out += self._emit(clean_inline(seg), boundary=i == len(segments) - 1)
        if not line.strip():
            out += self._emit("", force=True)  # a blank line ends a paragraph
        return out

    def _complete_sentences(self) -> list[str]:
        # Only re-segment when the new text can have closed a sentence.
        if not _SENTENCE_DONE.search(self._line):
            return []
        if not self._line_has_output:
            self._line = _LINE_PREFIX.sub("", self._line)
        segments = self._segmenter.segment(self._line)
        if len(segments) < 2:
            return []
        out: list[str] = []
        for seg in segments[:-1]:
            out += self._emit(clean_inline(seg))
        self._line = segments[-1]
        self._line_has_output = True
        return out

    def _opening_phrase(self) -> list[str]:
        """The first sentence's opening phrase, before the sentence is complete.

        An LLM writes a long first sentence for a second or more; its opening
        phrase can be spoken as soon as the words after it show where it ends.
        """
        line = self._line if self._line_has_output else _LINE_PREFIX.sub("", self._line)
        cut = first_phrase(line)
        if cut is None:
            return []
        head, rest = cut
        # The space after the last word shows the next chunk starts a new word.
        self._line = rest + line[len(line.rstrip()) :]
        self._line_has_output = True
        # Short as it may be, the head is said alone: a listener is waiting for it.
        head = clean_inline(head)
        out = self._emit(head, force=True)
        self._head_said = len(head)
        return out

    # -- pieces ------------------------------------------------------------

    def _emit(self, sentence: str, boundary: bool = False, force: bool = False) -> list[str]:
        """Join short sentences to a neighbour; cut long ones at clauses."""
        if sentence and not re.search(r"\w", sentence):
            sentence = ""  # only punctuation or symbols: nothing to say
        if boundary and sentence and not _ENDS_SENTENCE.search(sentence):
            # Headings and list items: pause as after a sentence.
            sentence += "。" if _WIDE.search(sentence[-1]) else "."
        text = f"{self._held} {sentence}".strip() if self._held else sentence
        self._held = ""
        if not text:
            return []
        if self._head_said:
            # The rest of a sentence whose head was said goes next on its own, however
            # short (joined to the next sentence it would be late), in phrases while
            # it is too long to follow the head without a gap.
            said, self._head_said = self._head_said, 0
            return [p for part in opening_phrases(text, said) for p in split_long(part)]
        if piece_length(text) < MIN_PIECE_CHARS and not force:
            self._held = text
            return []
        return list(split_long(text))


def piece_length(text: str) -> int:
    """Length for the piece limits: CJK characters count twice (see _WIDE)."""
    return len(text) + len(_WIDE.findall(text))


def split_long(text: str, limit: int = MAX_PIECE_CHARS) -> Iterator[str]:
    """Cut a long sentence at clause marks, else at spaces; never drop a word."""
    if piece_length(text) <= limit:
        yield text
        return
    limit = max(1, limit * len(text) // piece_length(text))  # in characters of this text
    parts = _CLAUSE_CUT.split(text)
    current = ""
    for part in parts:
        while len(part) > limit:  # one clause that is still too long
            cut = part.rfind(" ", 0, limit)
            cut = cut if cut > limit // 3 else limit
            if current:
                yield current
                current = ""
            yield part[:cut].strip()
            part = part[cut:].strip()
        if current and len(current) + 1 + len(part) > limit:
            yield current
            current = part
        else:
            current = f"{current} {part}".strip()
    if current:
        yield current


def split_text(text: str, language: str = "en") -> list[str]:
    """All speakable pieces of a whole text."""
    stream = SentenceStream(language)
    return stream.feed(text) + stream.finish()
