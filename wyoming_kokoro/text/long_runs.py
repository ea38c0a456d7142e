"""Runs of characters without a space too long to listen to, cut to their head.

Light (only `re`): the server cuts a run before it makes pieces of it, the worker
again before any language's passes.
"""

from __future__ import annotations

import re

from wyoming_kokoro.text.charsets import (
    CJK_MARKS,
    COMPAT_IDEOGRAPHS,
    FULLWIDTH_FORMS,
    IDEOGRAPHS,
    KANA,
)

# A run of characters without a space this long is no word: a hash, a base64 blob, a
# digit string, a pasted token. Nobody listens to it whole (a long one took minutes
# to say), so its first characters are read and the rest skipped,
# marked with an ellipsis (a pause in every language, no words to translate). Long
# enough that real words, long URLs and numbers of any sane length are read in full.
MAX_RUN = 100
# More digits than any language here reads as one number: a cut digit string is still
# read digit by digit, never as a made-up quantity.
RUN_HEAD = 20
# Scripts written without spaces between words are long runs by nature: not counted.
NO_SPACE_SCRIPTS = (
    f"{KANA}{IDEOGRAPHS}{COMPAT_IDEOGRAPHS}{CJK_MARKS}{FULLWIDTH_FORMS}"
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
)
_RUN = re.compile(rf"[^\s{NO_SPACE_SCRIPTS}]+")
_LONG_RUN = re.compile(rf"[^\s{NO_SPACE_SCRIPTS}]{{{MAX_RUN + 1},}}")
# A long link keeps its address up to the host: the host is what a listener can use,
# and the URL pass reads it as usual.
_LINK_HOST = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)[^/?#\s]+", re.IGNORECASE)


def bound_runs(text: str) -> str:
    """Each run of more than MAX_RUN characters without a space cut to its first
    RUN_HEAD characters and an ellipsis (a link: up to its host)."""
    return _LONG_RUN.sub(_head, text)


def _head(match: re.Match[str]) -> str:
    link = _LINK_HOST.match(match[0])
    if link and len(link[0]) <= MAX_RUN:
        return link[0] + " … "
    return match[0][:RUN_HEAD] + "… "


class RunTail:
    """Drops what a run grows beyond `keep` characters, however its text is chunked.

    Streamed text holds a run in the line until it ends; its tail, dropped here, is
    never made into pieces (each would be read as a run head of its own).
    """

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._run = 0  # characters of the run the text so far ends in

    def feed(self, chunk: str) -> str:
        """`chunk` without what its runs have beyond `keep` characters."""
        out: list[str] = []
        pos = 0
        for m in _RUN.finditer(chunk):
            prior = self._run if m.start() == 0 else 0
            out += [chunk[pos : m.start()], m[0][: max(0, self._keep - prior)]]
            self._run = prior + len(m[0])
            pos = m.end()
        if pos < len(chunk):
            self._run = 0
            out.append(chunk[pos:])
        return "".join(out)
