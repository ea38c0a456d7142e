"""The first phrase of a piece: what a listener who is waiting hears first.

Model time grows with the length of a call, so the first audio of an utterance
comes sooner when its first call says only the opening phrase of the sentence.
The cut must fall where a speaker could breathe: after a clause mark, or before a
word that opens a phrase (a conjunction, a preposition, a relative pronoun),
never inside "the front door". Failing those, a long subject ends before its verb
("The living room temperature | is twenty one degrees."), the boundary speakers
mark after a heavy subject. Under about three words Kokoro sounds rushed, so a
sentence with no such place is spoken whole.
"""

from __future__ import annotations

import re

# The opening phrase needs this much to sound natural (under ~15 tokens sounds weak).
MIN_HEAD_WORDS = 3
MIN_HEAD_CHARS = 14
# ...but a two-word sentence of its own ("Good morning!", "All done.") can go first.
MIN_GREETING_CHARS = 9
# Past this the head is no quicker than the sentence was: speak it whole.
MAX_HEAD_WORDS = 9
# A tail of one word would be spoken alone, flat: keep it with the head.
MIN_TAIL_WORDS = 2

# Words that open a phrase in English: a cut just before one sounds like a pause
# the speaker chose. Articles and adjectives are absent on purpose.
_OPENERS = """
and but or nor so yet because although though while whereas unless until since
if when whenever where wherever after before once as than that which who whom whose
to of for with without within in on at from by into onto about above below under
over across through during between against among around behind beyond near
"""
_PHRASE_OPENERS = frozenset(_OPENERS.split())
# These are also verb particles ("the lights are on and", "turn in the form"): a cut
# before one needs a noun phrase after it ("in the kitchen", "on Friday", "at 7").
_PARTICLES = frozenset(("in", "on", "over", "about", "around", "through", "by", "near"))
_DETERMINERS = """
the a an my your his her its our their this that these those some every each all
any no one two three four five six seven eight nine ten
"""
_NOUN_PHRASE_START = frozenset(_DETERMINERS.split())
# The verb after a subject: only auxiliaries and forms of "be", the verbs a list
# can name without knowing the sentence's grammar.
_AUX = "is are was were will would can could should shall may might must has have had"
_AUXILIARIES = frozenset(_AUX.split())
# A subject ending in one of these is not a whole noun phrase ("I think it | is"),
# or the verb belongs to a relative clause ("the door that | is open").
_NON_SUBJECT = "i you he she it we they there here this these those what not also still"
_NOT_SUBJECT_END = _PHRASE_OPENERS | frozenset(_NON_SUBJECT.split())
# After the head, the next call may say at most this many times what was said
# before it: at a real-time factor of 0.3-0.45 (int8, 2 x86 cores) it is then
# spoken before the audio in hand runs out. A longer rest gets a phrase cut too.
RUN_AHEAD = 2
# A predicate of at least this many words ("is twenty one degrees"): a cut before
# "is locked." would leave two flat words on their own.
MIN_PREDICATE_WORDS = 3
# A sentence or clause mark at the end of a word (before closing quotes).
_MARK = re.compile(r"[,;:—–.!?…][\"')\]”’]*$")
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?…][\"')\]”’]*$")


def first_phrase(text: str) -> tuple[str, str] | None:
    """Split `text` into (opening phrase, rest), or None when it is best spoken whole."""
    spans = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    if len(spans) < MIN_HEAD_WORDS + MIN_TAIL_WORDS:
        return None
    last_head = min(MAX_HEAD_WORDS, len(spans) - MIN_TAIL_WORDS)
    greeting = spans[1][2]  # "Good morning!": a whole short sentence first
    complete = _SENTENCE_END.search(greeting) and greeting.lower() not in _ABBREVIATIONS
    if complete and spans[1][1] >= MIN_GREETING_CHARS:
        return _cut(text, spans, 2)
    for count in range(MIN_HEAD_WORDS, last_head + 1):
        end = spans[count - 1][1]
        if end < MIN_HEAD_CHARS:
            continue
        previous, following = spans[count - 1][2], spans[count][2]
        if _ends_mark(previous) or _opens_phrase(following, spans[count + 1][2]):
            return _cut(text, spans, count)
    return _subject_cut(text, spans)


def opening_phrases(text: str, said: int = 0) -> list[str]:
    """`text` as the calls a waiting listener hears without a gap: the opening
    phrase (unless `said` characters of it were said already), then further
    phrases while the rest is too long to follow what was said in time."""
    parts: list[str] = []
    rest = text
    while len(rest) > RUN_AHEAD * said and (cut := first_phrase(rest)) is not None:
        parts.append(cut[0])
        said += len(cut[0])
        rest = cut[1]
    return [*parts, rest]


def _subject_cut(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, str] | None:
    """Before the first verb, when the words before it can be a whole subject.

    Only in a whole sentence: in text still being streamed a better place may come,
    and an opening phrase already cut off ("The garage door has been open") is not
    cut again ("The garage door | has been open").
    """
    if not _SENTENCE_END.search(spans[-1][2]):
        return None
    last_head = min(MAX_HEAD_WORDS, len(spans) - MIN_PREDICATE_WORDS)
    for count in range(1, last_head + 1):
        previous, following = spans[count - 1][2], spans[count][2]
        if _ends_mark(previous) or following.lower() not in _AUXILIARIES:
            continue
        head, rest = _cut(text, spans, count)
        head_ok = count >= MIN_HEAD_WORDS and len(head) >= MIN_HEAD_CHARS
        # A predicate much longer than its subject would not be ready when the
        # subject has been said: better no cut than a gap.
        in_time = len(rest) <= RUN_AHEAD * len(head)
        if head_ok and in_time and previous.lower() not in _NOT_SUBJECT_END:
            return head, rest
        return None  # the first verb decides: later ones belong to other clauses
    return None


def _cut(text: str, spans: list[tuple[int, int, str]], count: int) -> tuple[str, str]:
    """`text` split after its first `count` words."""
    return text[: spans[count - 1][1]].strip(), text[spans[count][0] :].strip()


def _opens_phrase(word: str, after: str) -> bool:
    word = word.lower().strip("\"'(“‘")
    if word not in _PHRASE_OPENERS:
        return False
    if word not in _PARTICLES:
        return True
    return after.lower() in _NOUN_PHRASE_START or after[:1].isdigit() or after[:1].isupper()


# Titles and abbreviations end with a full stop but not a phrase: "I met Dr. Smith".
_ABBREVIATIONS = frozenset(
    ("mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "mt.", "vs.", "etc.", "e.g.", "i.e.", "no.")
)


def _ends_mark(word: str) -> bool:
    return _MARK.search(word) is not None and word.lower() not in _ABBREVIATIONS
