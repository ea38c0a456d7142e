"""Markdown, HTML and emoji out of spoken text: what a line is, and its words.

An LLM answers in markdown. Its structure (rules, tables, list and heading markers;
fences: fences.py) is recognised per line by `SentenceStream`; inline marks are removed here
and the words kept.
"""

from __future__ import annotations

import re

from wyoming_kokoro.text.charsets import EMOJI_GLUE, PICTOGRAPHS

LINE_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+")
RULE = re.compile(r"^\s*([-*_=]\s*){3,}$")
TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# Fences and table rows are only understood as whole lines.
WAITS_FOR_LINE_END = re.compile(r"\s*(?:```|~~~|\||`{1,2}\Z|~{1,2}\Z)")

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_CODE = re.compile(r"`([^`]*)`")
_EMPHASIS = re.compile(
    r"(?<![*_~\w])(\*{1,3}|_{1,3}|~~)(?=[^\s*_~])(.+?)(?<=[^\s*_~])\1(?![*_~\w])"
)
# What is left after pairing: a sentence split can cut "**bold**" in two, and a
# lone asterisk is read aloud as "asterisk". Underscores inside words stay.
_STRAY = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|~{2,}|`+|^#+\s*|(?<=\s)#{2,}\s")
_TIMES = re.compile(r"(?<=\d)\s*[*×]\s*(?=\d)")
# Only what is plausibly a tag goes: a known tag name, alone or with attributes that
# have values ("<b and c>" in "a<b and c>d" is a comparison, not a tag). An unknown
# name in brackets is a word someone wrote so: "<Ctrl>" is read "Ctrl".
_TAG_NAMES = (
    "a|abbr|address|article|aside|b|bdi|bdo|big|blockquote|body|br|button|caption|center|"
    "cite|code|col|colgroup|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|font|footer|"
    "form|h[1-6]|head|header|hr|html|i|img|input|ins|kbd|label|li|main|mark|nav|ol|p|pre|"
    "q|s|samp|section|small|span|strike|strong|sub|summary|sup|table|tbody|td|tfoot|th|"
    "thead|time|tr|tt|u|ul|var|wbr"
)
_ATTRIBUTE = (
    r"\s+[A-Za-z_:][\w:.-]*\s*=\s*"  # a name, then its value: quoted or not
    r"""(?:"[^"<>]{0,200}"|'[^'<>]{0,200}'|[^\s"'<>=`]{1,200})"""
)
# An unknown name is a tag only with a quoted value: "x<y z=2>w" is arithmetic.
_QUOTED = r"""\s+[A-Za-z_:][\w:.-]*\s*=\s*(?:"[^"<>]{0,200}"|'[^'<>]{0,200}')"""
_HTML = re.compile(
    rf"<(?:/(?:{_TAG_NAMES})\s*|(?:{_TAG_NAMES})(?:{_ATTRIBUTE})*\s*/?|!--.{{0,200}}?--)>"
    rf"|<[A-Za-z][\w-]*(?:{_ATTRIBUTE})*{_QUOTED}(?:{_ATTRIBUTE})*\s*/?>",
    re.IGNORECASE,
)
_BRACKETED_WORD = re.compile(r"(?<![\w<])<([A-Za-z][\w+-]*)>(?![\w>])")
_EMOJI = re.compile(f"[{PICTOGRAPHS}{EMOJI_GLUE}]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u00a0]+")


def clean_inline(text: str) -> str:
    """Remove inline markdown, HTML and emoji; keep the words."""
    text = _CONTROL.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(2):  # nested emphasis like ***bold italic*** or **_both_**
        text = _EMPHASIS.sub(r"\2", text)
    text = _HTML.sub(" ", text)
    text = _BRACKETED_WORD.sub(_bracketed_word, text)
    text = _TIMES.sub(" times ", text)
    text = _STRAY.sub("", text)
    text = _EMOJI.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def table_row(line: str) -> str:
    """A table row as spoken: its cells' words, one after another."""
    cells = [clean_inline(c) for c in line.strip().strip("|").split("|")]
    return ", ".join(c for c in cells if c)


def _bracketed_word(match: re.Match[str]) -> str:
    """The word; a space after it if another bracket follows ("<x><y>" is two words)."""
    following = match.string[match.end() : match.end() + 1]
    return match.group(1) + (" " if following == "<" else "")
