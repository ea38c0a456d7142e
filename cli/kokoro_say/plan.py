"""What a long document is spoken as: each chapter's pieces, in order, grouped into
parts. A part is the unit of work: spoken by one process, kept on disk until the
output is complete (resume.py), and joined with the others in the book's order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS

from .resume import key_of

# A part is about a minute of speech: small enough that a stop loses little and the
# processes finish close together, large enough that its bookkeeping costs nothing.
PART_CHARS = 1200
# Between chapters, as an audiobook pauses; the chapter mark is at the next one's audio.
CHAPTER_PAUSE = 2.0
# For --list-chapters' estimate only (Kokoro's pace at speed 1, roughly).
WORDS_PER_MINUTE = 165


@dataclass(frozen=True)
class Say:
    """A piece of text as one voice says it."""

    text: str
    voice: str
    speed: float
    volume: float
    lang: str
    sentence_pause: int = SENTENCE_PAUSE_MS  # after a sentence's end, at speed 1.0


@dataclass(frozen=True)
class Pause:
    """Silence within a chapter (an SSML break)."""

    ms: int


Step = Say | Pause


@dataclass(frozen=True)
class Part:
    chapter: int  # the chapter's index in the book
    steps: tuple[Step, ...]

    @property
    def chars(self) -> int:
        return sum(len(s.text) for s in self.steps if isinstance(s, Say)) or 1

    def key(self, run_key: str) -> str:
        """The part's identity: the run's (model, options) and its own steps."""
        steps = [(type(s).__name__, asdict(s)) for s in self.steps]
        return key_of([run_key, steps])


def group(chapter: int, steps: Iterable[Step], limit: int = PART_CHARS) -> list[Part]:
    """A chapter's steps in parts of about `limit` characters, never splitting a step
    (a part holds at least one piece); a chapter with nothing said has no parts."""
    parts: list[Part] = []
    current: list[Step] = []
    chars = 0
    for step in steps:
        size = len(step.text) if isinstance(step, Say) else 0
        if current and chars + size > limit and any(isinstance(s, Say) for s in current):
            parts.append(Part(chapter, tuple(current)))
            current, chars = [], 0
        current.append(step)
        chars += size
    if any(isinstance(s, Say) for s in current):
        parts.append(Part(chapter, tuple(current)))
    elif current and parts:  # a trailing pause belongs to the part before it
        last = parts[-1]
        parts[-1] = Part(chapter, last.steps + tuple(current))
    return parts


def words(text: str) -> int:
    """Words for --list-chapters: spaced words, or characters where none are spaced."""
    spaced = len(text.split())
    dense = sum(1 for ch in text if ord(ch) >= 0x3000)  # kana and ideographs
    return max(spaced, dense // 2)


def estimate_seconds(word_count: int, speed: float) -> float:
    return word_count / (WORDS_PER_MINUTE * speed) * 60


def clock(seconds: float) -> str:
    """1:02:03 or 2:03."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
