"""SSML → what to say, in which voice, rate and language, and the silences between.

Parsed with defusedxml: no DTD, so no entity expansion (billion laughs) and no
external entity is ever read; nesting deeper than MAX_DEPTH is refused before it is
walked. Those refusals are `SsmlError`s. Anything else the parser cannot use is
contained to where it is: an unknown element or an unusable attribute value is read
as its plain content, a document that is not well-formed XML as plain text without
its tags (ssml_plain.py), each with one warning. Supported: speak, p, s, break (time,
strength), prosody (rate, volume), say-as (characters, cardinal, ordinal, date, time,
telephone), sub, phoneme (ipa, Kokoro's own phonemes), lang, voice (a voice, blend or
preset), emphasis and mark. Text is normalized later, as always.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

from wyoming_kokoro.audio import Pauses, pause_after
from wyoming_kokoro.text.g2p.inline import PHONEMES_CLOSE, PHONEMES_OPEN, from_ipa
from wyoming_kokoro.text.say_as import said_as
from wyoming_kokoro.text.ssml_plain import declares_dtd, plain_text, repaired
from wyoming_kokoro.text.ssml_values import MAX_BREAK_MS, break_ms, note, rate, volume

log = logging.getLogger(__name__)

MAX_DEPTH = 64
# All the silence of one document: beyond it, thousands of breaks would be made into
# gigabytes of silent audio before the first word is said.
MAX_SILENCE_MS = 300_000
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_KNOWN = {"speak", "p", "s", "break", "prosody", "say-as", "sub", "phoneme", "lang", "voice"}
_KNOWN |= {"emphasis", "mark", "paragraph", "sentence"}
_PARAGRAPH_MS = 250  # after a paragraph, on top of its last sentence's pause


class SsmlError(ValueError):
    """SSML that cannot be spoken as written; the message says why."""


@dataclass(frozen=True)
class Style:
    """How a stretch of text is said: None means the request's own."""

    voice: str | None = None
    rate: float = 1.0  # times the voice's speed
    volume: float = 1.0
    lang: str | None = None


@dataclass(frozen=True)
class Say:
    text: str
    style: Style


@dataclass(frozen=True)
class Pause:
    """Silence between two stretches of text (which it also ends as a whole piece).

    An explicit `<break>` is the silence between the words around it: the pause a
    sentence or clause end brings (`audio.pause_after`) counts toward its time, never on
    top of it, so a break after a sentence is heard as long as it was asked; a break
    shorter than that pause leaves the pause. The pauses of structure (`</s>`, `</p>`)
    are added after the sentence's own.
    """

    ms: int  # 0: only a boundary (the text before it is a whole piece)
    explicit: bool = False  # a <break>: its time includes the pause of the text before it

    def silence_ms(self, before: str, speed: float = 1.0, pauses: Pauses | None = None) -> int:
        """The silence to add after `before` (the last piece said before the pause, at
        `speed`), whose end already brings its own pause (`pauses.sentence` after a
        sentence). A paragraph's end adds its own or what the paragraph pause has over
        the sentence pause, whichever is longer."""
        pauses = pauses or Pauses()
        if not self.explicit:
            if self.ms and before:  # </p>
                return max(self.ms, pauses.after_paragraph(speed))
            return self.ms
        own = pause_after(before, pauses.sentence) * 1000 / speed if before else 0.0
        return max(0, round(self.ms - own))


Segment = Say | Pause


def is_ssml(text: str) -> bool:
    """Text that is meant as SSML: it opens with <speak>, an XML declaration or a DTD
    (which parse() then refuses: a document is never read aloud as text)."""
    head = text.lstrip()[:9].lower()
    return head.startswith(("<speak", "<?xml", "<!doctype"))


def parse(text: str) -> list[Segment]:
    """The segments of an SSML document, in order. SsmlError only for what is refused
    on purpose (a DTD or entities, deep nesting, too much silence); text that is no
    well-formed XML is read as plain text."""
    import defusedxml.ElementTree as SafeET
    from defusedxml import DefusedXmlException

    if declares_dtd(text):
        # Refused even when malformed: such text is an attack or a mistake, never words.
        raise SsmlError("SSML may not declare a DTD or entities")
    root = None
    for attempt in dict.fromkeys((text, repaired(text))):
        try:
            root = SafeET.fromstring(attempt, forbid_dtd=True)
            break
        except DefusedXmlException as err:
            raise SsmlError(
                f"SSML may not declare a DTD or entities ({type(err).__name__})"
            ) from None
        except ET.ParseError:
            continue
    if root is None:
        log.warning("SSML is not well-formed XML: read as plain text, its tags stripped")
        said = _SPACES.sub(" ", _clean(plain_text(text))).strip()
        return [Say(said, Style())] if said else []
    _check_depth(root)
    notes: list[str] = []
    out: list[Segment] = []
    _walk(root, Style(lang=root.get(_XML_LANG)), out, notes)
    if notes:  # one warning, naming elements and attributes, never the text
        log.warning("SSML read plainly where it could not be used: %s", ", ".join(notes))
    merged = _merge(out)
    # The structure closing the document (a last </p>) is a pause before nothing: the
    # answer's tail silence is its own, as after plain text's last paragraph.
    while merged and isinstance(merged[-1], Pause) and not merged[-1].explicit:
        merged.pop()
    if sum(s.ms for s in merged if isinstance(s, Pause)) > MAX_SILENCE_MS:
        raise SsmlError(f"SSML's breaks add up to more than {MAX_SILENCE_MS // 1000} s")
    return merged


def _local(tag: object) -> str:
    name = tag if isinstance(tag, str) else ""
    return name.rsplit("}", 1)[-1]


def _check_depth(root: ET.Element) -> None:
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SsmlError(f"SSML nested deeper than {MAX_DEPTH} elements")
        stack.extend((child, depth + 1) for child in element)


def _clean(text: str | None) -> str:
    # Our phoneme markers are ours to place: never from the document's text.
    return (text or "").replace(PHONEMES_OPEN, " ").replace(PHONEMES_CLOSE, " ")


def _walk(element: ET.Element, style: Style, out: list[Segment], notes: list[str]) -> None:
    tag = _local(element.tag)
    lang = element.get(_XML_LANG)
    if lang:
        style = replace(style, lang=lang)
    if tag not in _KNOWN:
        note(notes, f"<{tag}>")
    said: str | None = None
    if tag == "break":
        out.append(Pause(break_ms(element, notes), explicit=True))
    elif tag == "say-as":
        said = say_as(element, notes)
    elif tag == "sub":
        alias = element.get("alias")
        if alias and alias.strip():
            said = _clean(alias)
        else:
            note(notes, "<sub alias>")
    elif tag == "phoneme":
        said = _phoneme(element, notes)
    elif tag == "prosody":
        speed = rate(element.get("rate"), notes)
        style = replace(
            style,
            rate=style.rate * speed,
            volume=style.volume * volume(element.get("volume"), notes),
        )
    elif tag == "voice":
        name = element.get("name")
        if name and name.strip():
            style = replace(style, voice=name.strip())
    if said is not None:
        out.append(Say(said, style))
        return  # spoken whole: its tail is spoken by the parent
    # Its content, as written (a break's too, though it should have none).
    if element.text:
        out.append(Say(_clean(element.text), style))
    for child in element:
        _walk(child, style, out, notes)
        if child.tail:
            out.append(Say(_clean(child.tail), style))
    if tag in ("s", "sentence"):
        out.append(Pause(0))
    elif tag in ("p", "paragraph"):
        out.append(Pause(_PARAGRAPH_MS))


def _merge(segments: list[Segment]) -> list[Segment]:
    """Adjacent text in one style as one Say; pauses in a row as one (see `Pause`)."""
    merged: list[Segment] = []
    for segment in segments:
        last = merged[-1] if merged else None
        if isinstance(segment, Say):
            if isinstance(last, Say) and last.style == segment.style:
                merged[-1] = Say(last.text + segment.text, segment.style)
            else:
                merged.append(segment)
        elif isinstance(last, Pause):
            # Breaks in a row add up; a break replaces the pauses of structure at its place.
            if last.explicit == segment.explicit:
                merged[-1] = Pause(min(last.ms + segment.ms, MAX_BREAK_MS), last.explicit)
            elif segment.explicit:
                merged[-1] = segment
        else:
            merged.append(segment)
    # Line breaks in a document are spaces, not the markdown lines of plain text.
    return [Say(_SPACES.sub(" ", m.text), m.style) if isinstance(m, Say) else m for m in merged]


_SPACES = re.compile(r"\s+")


def _phoneme(element: ET.Element, notes: list[str]) -> str | None:
    """The phonemes written for the element (None: its content is read instead)."""
    ph = element.get("ph")
    alphabet = (element.get("alphabet") or "ipa").strip().lower()
    if not ph or not ph.strip():
        phonemes = None
    elif alphabet == "ipa":
        phonemes = from_ipa(ph)
    elif alphabet in ("x-kokoro", "kokoro", "x-misaki", "misaki"):
        phonemes = ph
    else:
        phonemes = None
    phonemes = _clean(phonemes).strip() if phonemes is not None else ""
    if not phonemes:
        note(notes, "<phoneme>")
        return None
    return f" {PHONEMES_OPEN}{phonemes}{PHONEMES_CLOSE} "


def say_as(element: ET.Element, notes: list[str] | None = None) -> str:
    """The words a <say-as> stands for, as text the normalizer then reads; its text as
    written when it does not fit its kind."""
    kind = (element.get("interpret-as") or "").strip().lower()
    text = _clean("".join(element.itertext())).strip()
    try:
        return f" {said_as(kind, text, (element.get('format') or 'ymd').strip().lower())} "
    except ValueError:
        note(notes if notes is not None else [], f"<say-as interpret-as={kind[:20]!r}>")
        return f" {text} "
