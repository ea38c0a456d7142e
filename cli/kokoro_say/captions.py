"""kokoro-say's captions: the words' times as SRT, WebVTT or JSON, by the file's extension.

The file is opened (a temporary file beside it) before anything is spoken, so a path
that cannot be written costs no synthesis; it appears under its name only when
complete, as the audio file does.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from wyoming_kokoro.timeline import WordTime

from . import partial

FORMATS = ("srt", "vtt", "json")
# A cue ends after a sentence, or before it would be longer than two subtitle lines
# (half as many wide characters) or this many seconds.
_CUE_CHARS = 84
_CUE_SECONDS = 5.0
_SENTENCE_END = (".", "!", "?", "…", "。", "！", "？")


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    text: str


def caption_format(path: str) -> str:
    """srt, vtt or json, from the extension (ValueError for any other)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise ValueError(f"cannot write captions to {path}: name it .srt, .vtt or .json")
    return ext


def cues(words: list[WordTime], spaced: bool = True) -> list[Cue]:
    """Words grouped into cues; a word without times shows in the cue it falls in."""
    out: list[Cue] = []
    group: list[WordTime] = []

    def close() -> None:
        timed = [w for w in group if w.start is not None and w.end is not None]
        if timed:
            text = (" " if spaced else "").join(w.word for w in group)
            out.append(Cue(timed[0].start, timed[-1].end, text))  # type: ignore[arg-type]
        elif out and group:  # nothing timed: its words join the cue before
            last = out[-1]
            joined = (" " if spaced else "").join([last.text, *(w.word for w in group)])
            out[-1] = Cue(last.start, last.end, joined)
        group.clear()

    room = _CUE_CHARS if spaced else _CUE_CHARS // 2
    for word in words:
        first = next((w.start for w in group if w.start is not None), None)
        chars = sum(len(w.word) + spaced for w in group) + len(word.word)
        long = chars > room or (
            first is not None and word.end is not None and word.end - first > _CUE_SECONDS
        )
        if group and long:
            close()
        group.append(word)
        if word.word.endswith(_SENTENCE_END):
            close()
    close()
    return out


def _clock(seconds: float, mark: str) -> str:
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{mark}{ms:03d}"


def render(words: list[WordTime], fmt: str, spaced: bool = True) -> str:
    """The caption file's text."""
    if fmt == "json":
        rows = [{"word": w.word, "start_time": w.start, "end_time": w.end} for w in words]
        return json.dumps(rows, ensure_ascii=False, indent=1) + "\n"
    lines = ["WEBVTT", ""] if fmt == "vtt" else []
    mark = "." if fmt == "vtt" else ","
    for number, cue in enumerate(cues(words, spaced), 1):
        if fmt == "srt":
            lines.append(str(number))
        lines.append(f"{_clock(cue.start, mark)} --> {_clock(cue.end, mark)}")
        lines += [cue.text, ""]
    return "\n".join(lines)


class CaptionFile:
    """A caption file that can be written: checked (and begun) before speaking."""

    def __init__(self, path: str) -> None:
        self.format = caption_format(path)
        self._path = path
        if os.path.isdir(path):
            raise OSError(f"cannot write captions to {path}: it is a directory")
        directory = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(directory):
            raise OSError(f"cannot write captions to {path}: no directory {directory}")
        try:
            fd, self._tmp = partial.make(os.path.realpath(path))
        except OSError as err:
            reason = (err.strerror or str(err)).lower()
            raise OSError(f"cannot write captions to {path}: {reason}") from err
        os.close(fd)

    def write(self, words: list[WordTime], spaced: bool = True) -> None:
        """Write the captions and give the file its name."""
        try:
            Path(self._tmp).write_text(render(words, self.format, spaced), encoding="utf-8")
            os.chmod(self._tmp, 0o666 & ~_umask())
            os.replace(self._tmp, os.path.realpath(self._path))
        except OSError as err:  # a full disk: the user's name and the reason in words
            reason = (err.strerror or str(err)).lower()
            raise OSError(f"cannot write captions to {self._path}: {reason}") from err

    def discard(self) -> None:
        Path(self._tmp).unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
