"""SSML that is not well-formed XML: the obvious repairs tried first, then its plain
text with the tags stripped, so a mistake in markup never silences the answer."""

from __future__ import annotations

import html
import re

# A '&' that starts no entity or character reference: "Tom & Jerry".
_BARE_AMP = re.compile(r"&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)")
# A prefix used in a tag name ("amazon:effect"), which XML wants declared.
_PREFIX = re.compile(r"</?([A-Za-z_][\w.-]*):[A-Za-z_]")
_SPEAK = re.compile(r"<speak\b")
# A tag opens with a name, '/', '?' or '!': "a < b and c > d" is no tag.
_TAG = re.compile(r"<(?:[/?]?[A-Za-z_]|!)[^<>]*>")
_DECLARES = re.compile(r"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def declares_dtd(text: str) -> bool:
    """Text that declares a DTD or entities anywhere (never read, even as plain text)."""
    return _DECLARES.search(text) is not None


def repaired(text: str) -> str:
    """`text` with bare '&' escaped and the prefixes of tag names (Alexa's
    `amazon:`) declared on <speak>; unchanged when there is nothing to repair."""
    text = _BARE_AMP.sub("&amp;", text)
    prefixes = sorted({p for p in _PREFIX.findall(text) if p != "xml"} - _declared(text))
    if prefixes:
        declared = "".join(f' xmlns:{p}="urn:x-undeclared:{p}"' for p in prefixes)
        text = _SPEAK.sub("<speak" + declared, text, count=1)
    return text


def _declared(text: str) -> set[str]:
    return set(re.findall(r"xmlns:([A-Za-z_][\w.-]*)\s*=", text))


def plain_text(text: str) -> str:
    """What a document that is no XML says: its text, the tags stripped, references
    read as the characters they stand for."""
    return html.unescape(_TAG.sub(" ", text))
