"""What is spoken, in pieces: sentences of whole and streamed text, markdown left out.

Text arrives either whole (`kokoro-say`, `synthesize`) or in mid-word pieces while
an LLM writes (`synthesize-chunk`). Both go through `SentenceStream`, so a
sentence is ready to speak as soon as the text after it shows that it is complete.
Where a sentence ends is `sentence_ends`' to say; how it is said in pieces, `joining`'s.
"""

from __future__ import annotations

from wyoming_kokoro.text.clauses import MAX_PIECE_CHARS, cut_point
from wyoming_kokoro.text.fences import Fences, LineKind
from wyoming_kokoro.text.joining import Joiner
from wyoming_kokoro.text.long_runs import MAX_RUN, RunTail
from wyoming_kokoro.text.markdown import (
    LINE_PREFIX,
    RULE,
    TABLE_SEP,
    WAITS_FOR_LINE_END,
    clean_inline,
    table_row,
)
from wyoming_kokoro.text.phrases import first_phrase
from wyoming_kokoro.text.sentence_ends import (
    CONTEXT,
    LOOKAHEAD,
    SENTENCE_DONE,
    WINDOW,
    Segmenter,
    decided,
    quiet_end,
    window_start,
    word_after,
)

# A sentence that pysbd has not ended after this many characters is cut at a clause
# before it is spoken (in clause pieces, as any sentence over MAX_PIECE_CHARS).
MAX_SENTENCE_CHARS = 4 * MAX_PIECE_CHARS

# A run without spaces is kept this long as it arrives and its tail dropped: cut into
# pieces, each would be read as a run head of its own. Long enough for a markdown link
# around a long URL to stay whole (the piece's cut to MAX_RUN comes after markdown);
# under half of MAX_SENTENCE_CHARS, so a long line's cut (cut_point) finds a space.
_KEPT_RUN = 4 * MAX_RUN

# Between the pieces of two paragraphs (a blank line) when asked for: a mark, not
# text (the paragraph pause is placed there, audio.Pauses). Unicode's own separator.
PARAGRAPH = "\u2029"


class SentenceStream:
    """Turns text, fed in any pieces, into speakable pieces (sentences or clauses).

    `feed()` returns the pieces that are known to be complete; `finish()` returns
    the rest. Markdown structure (headings, list items, table rows) ends a piece;
    code blocks are skipped; very short sentences are joined to the next one.

    The work per call is bounded by the new text, not by the line it extends: the
    server splits text on its event loop, and an LLM streams a long line in tiny
    chunks. pysbd is only shown a window around the sentence ends that are still
    undecided, and a sentence that never ends is cut at a clause.
    """

    def __init__(self, language: str = "en", paragraphs: bool = False) -> None:
        """`paragraphs`: a blank line after something said gives `PARAGRAPH`."""
        self._segmenter = Segmenter(language)
        self._line = ""  # raw text of the line being written
        self._line_has_output = False  # a sentence of this line was already emitted
        self._whole_line = True  # nothing of the line was taken off its start yet
        # No sentence of `_line` ends before this offset: the possible ends before it
        # were shown to pysbd with enough text after them, and it declined them.
        self._settled = 0
        self._fences = Fences()
        self._joiner = Joiner()
        self._started = False  # a piece was emitted: the listener hears something
        self._run_tail = RunTail(_KEPT_RUN)
        self._paragraphs = paragraphs
        self._since_paragraph = False  # a piece came since the last PARAGRAPH

    def feed(self, chunk: str, *, more: bool = True, head: bool = True) -> list[str]:
        """Add text; return the pieces that became complete.

        While `more` text may follow (an LLM still writing), an unfinished first
        sentence's opening phrase goes ahead on its own (unless `head` is False: then
        only when `head()` is asked for). A text given whole is spoken
        in whole sentences: a phrase cut costs the sentence its prosody, and on a slow
        CPU its later phrases, each a call of its own, came after a gap. Its first call
        is decoded in windows instead, or cut by the engine without them.
        """
        out: list[str] = []
        chunk = self._run_tail.feed(chunk.replace("\r\n", "\n").replace("\r", "\n"))
        while "\n" in chunk:
            line_end, chunk = chunk.split("\n", 1)
            self._fences.feed(line_end)
            self._line += line_end
            out += self._finish_line()
        self._fences.feed(chunk)
        self._line += chunk
        if self._line and not self._fences.in_code and not self._waits_for_line_end():
            out += self._sentences(final=False)
            if more and head and not out:
                out += self._head()
            out += self._cut_long()
        self._started = self._started or bool(out)
        return out

    def head(self) -> list[str]:
        """The unfinished first sentence's opening phrase, if one can go ahead now:
        nothing was said yet, and the words after it show where it ends."""
        if not self._line or self._fences.in_code or self._waits_for_line_end():
            return []
        out = self._head()
        self._started = self._started or bool(out)
        return out

    def _head(self) -> list[str]:
        return [] if self._started or self._joiner.holding else self._opening_phrase()

    def finish(self) -> list[str]:
        """End of text: return everything that is left."""
        out = self._finish_line() if self._line else []
        for line in self._fences.unclosed():  # not code after all: see fences.py
            self._line, self._whole_line = line, False
            out += self._finish_line()
        out += self._emit("", force=True)
        return out

    # -- lines -------------------------------------------------------------

    def _waits_for_line_end(self) -> bool:
        # Fences and table rows are only understood as whole lines. What is left of a
        # line after a sentence or a list marker went does not start a line: "a. ```b"
        # and "# ```b" are text.
        return self._whole_line and WAITS_FOR_LINE_END.match(self._line) is not None

    def _finish_line(self) -> list[str]:
        line, has_output, whole = self._line, self._line_has_output, self._whole_line
        self._line, self._settled, self._line_has_output, self._whole_line = "", 0, False, True
        kind = self._fences.line(line, may_open=whole)
        if kind is LineKind.CODE:
            return []
        if kind is LineKind.FENCE:
            return self._emit("", force=True)
        if whole:
            if RULE.match(line) or TABLE_SEP.match(line):
                return []
            if line.lstrip().startswith("|"):
                return self._emit(table_row(line), boundary=True)
        self._line, self._line_has_output, self._whole_line = line, has_output, whole
        if not has_output:
            self._strip_prefix()
        blank = not self._line.strip()
        out = self._sentences(final=True) + self._cut_long()
        rest = self._line
        self._line, self._settled, self._line_has_output, self._whole_line = "", 0, False, True
        segments = self._segmenter.segments(rest, 0, len(rest)) if rest.strip() else []
        for i, seg in enumerate(segments):
            out += self._emit(clean_inline(seg), boundary=i == len(segments) - 1)
        if blank:
            out += self._emit("", force=True)  # a blank line ends a paragraph
            if self._paragraphs and self._since_paragraph:
                out.append(PARAGRAPH)
                self._since_paragraph = False
        return out

    def _sentences(self, final: bool) -> list[str]:
        """Emit the sentences of the line that pysbd ends, one bounded window at a time.

        In a line still being written every window reaches its end, as the whole line
        did before. A line that is complete (`final`) keeps its last window for
        `_finish_line`, which segments what is left as a whole.
        """
        out: list[str] = []
        while found := SENTENCE_DONE.search(self._line, self._settled):
            if not self._line_has_output and self._strip_prefix():
                continue
            # pysbd may also end a sentence where no mark is: after `floor`, as ever.
            floor = self._settled
            # No possible end lies between the old mark and this one.
            self._settled = found.start()
            line = self._line
            end = min(len(line), found.end() + WINDOW)
            known = end == len(line)  # the window holds all text there is
            if known and final:
                return out
            if known and not word_after(line, found.end()):
                break  # nothing after the mark yet: pysbd cannot end a sentence there
            start = window_start(line, found.start())
            limit = len(line) if known else end - LOOKAHEAD
            bounds = [b for b in self._segmenter.bounds(line, start, end) if floor < b <= limit]
            cut = 0
            for b in bounds:
                out += self._emit(clean_inline(line[cut:b]))
                cut = b
            if cut:
                self._line_has_output = True
                self._drop_front(cut)
            self._settled = decided(self._line, found.start() - cut, limit - cut, known)
            if known:
                break
        if found is None:
            self._settled = quiet_end(self._line, self._settled)
        return out

    def _cut_long(self) -> list[str]:
        """Cut a sentence that pysbd has not ended after `MAX_SENTENCE_CHARS`.

        A sentence that long is spoken in clause pieces anyway (`split_long`); the
        cut keeps the line, and with it every later call, bounded. Only text well
        before any undecided sentence end is cut.
        """
        quiet = self._settled - CONTEXT
        if quiet <= MAX_SENTENCE_CHARS:
            return []
        if not self._line_has_output and self._strip_prefix():
            return self._cut_long()
        line, out, pos = self._line, [], 0
        while quiet - pos > MAX_SENTENCE_CHARS:
            cut = cut_point(line, pos, pos + MAX_SENTENCE_CHARS)
            out += self._emit(clean_inline(line[pos:cut]))
            pos = cut
        self._line_has_output = True
        self._drop_front(pos)
        return out

    def _strip_prefix(self) -> bool:
        """Drop a list or heading marker from the start of the line; True if one was."""
        stripped = LINE_PREFIX.sub("", self._line)
        if len(stripped) == len(self._line):
            return False
        self._drop_front(len(self._line) - len(stripped))
        return True

    def _drop_front(self, count: int) -> None:
        self._line = self._line[count:]
        self._settled = max(0, self._settled - count)
        self._whole_line = self._whole_line and not count

    def _opening_phrase(self) -> list[str]:
        """The first sentence's opening phrase, before the sentence is complete.

        An LLM writes a long first sentence for a second or more; its opening
        phrase can be spoken as soon as the words after it show where it ends.
        """
        line = self._line if self._line_has_output else LINE_PREFIX.sub("", self._line)
        cut = first_phrase(line)
        if cut is None:
            return []
        head, rest = cut
        # The space after the last word shows the next chunk starts a new word.
        rest += line[len(line.rstrip()) :]
        if self._line.endswith(rest):
            self._drop_front(len(self._line) - len(rest))
        else:  # not a tail of the line: what was settled in it is unknown
            self._line, self._settled, self._whole_line = rest, 0, False
        self._line_has_output = True
        # Short as it may be, the head is said alone: a listener is waiting for it.
        head = clean_inline(head)
        out = self._emit(head, force=True)
        self._joiner.head_said(len(head))
        return out

    # -- pieces ------------------------------------------------------------

    def _emit(self, sentence: str, boundary: bool = False, force: bool = False) -> list[str]:
        """Join short sentences to a neighbour; cut long ones at clauses."""
        out = self._joiner.pieces(sentence, boundary, force)
        self._since_paragraph = self._since_paragraph or bool(out)
        return out


def split_text(text: str, language: str = "en", paragraphs: bool = False) -> list[str]:
    """All speakable pieces of a whole text (with `PARAGRAPH` marks, if asked)."""
    stream = SentenceStream(language, paragraphs)
    return stream.feed(text, more=False) + stream.finish()
