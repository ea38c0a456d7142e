"""SSML → what to say, in which voice, rate and language, and the silences between.

Parsed with defusedxml: no DTD, so no entity expansion (billion laughs) and no
external entity is ever read; nesting deeper than MAX_DEPTH is refused before it is
walked. Malformed SSML is an `SsmlError` naming the problem: its tags are never read
aloud. Supported: speak, p, s, break (time, strength), prosody (rate, volume),
say-as (characters, cardinal, ordinal, date, time, telephone), sub, phoneme (ipa,
Kokoro's own phonemes), lang, voice (a voice, blend or preset), emphasis and mark;
other elements are spoken as their text. Text is normalized later, as always.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

from wyoming_kokoro.audio import pause_after
from wyoming_kokoro.text.g2p.inline import PHONEMES_CLOSE, PHONEMES_OPEN, from_ipa
from wyoming_kokoro.text.say_as import said_as

MAX_DEPTH = 64
MAX_BREAK_MS = 10_000  # one place's silence, its breaks in a row added up
# All the silence of one document: beyond it, thousands of breaks would be made into
# gigabytes of silent audio before the first word is said.
MAX_SILENCE_MS = 300_000
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_STRENGTH_MS = {
    "none": 0,
    "x-weak": 100,
    "weak": 200,
    "medium": 400,
    "strong": 700,
    "x-strong": 1000,
}
_RATES = {"x-slow": 0.5, "slow": 0.75, "medium": 1.0, "default": 1.0, "fast": 1.25, "x-fast": 1.5}
_VOLUMES = {
    "silent": 0.0,
    "x-soft": 0.25,
    "soft": 0.5,
    "medium": 1.0,
    "default": 1.0,
    "loud": 1.5,
    "x-loud": 2.0,
}
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

    def silence_ms(self, before: str, speed: float = 1.0) -> int:
        """The silence to add after `before` (the last piece said before the pause, at
        `speed`), whose end already brings its own pause."""
        if not self.explicit:
            return self.ms
        own = pause_after(before) * 1000 / speed if before else 0.0
        return max(0, round(self.ms - own))


Segment = Say | Pause


def is_ssml(text: str) -> bool:
    """Text that is meant as SSML: it opens with <speak>, an XML declaration or a DTD
    (which parse() then refuses: a document is never read aloud as text)."""
    head = text.lstrip()[:9].lower()
    return head.startswith(("<speak", "<?xml", "<!doctype"))


def parse(text: str) -> list[Segment]:
    """The segments of an SSML document, in order (SsmlError if it is not one)."""
    import defusedxml.ElementTree as SafeET
    from defusedxml import DefusedXmlException

    try:
        root = SafeET.fromstring(text, forbid_dtd=True)
    except DefusedXmlException as err:
        raise SsmlError(f"SSML may not declare a DTD or entities ({type(err).__name__})") from None
    except ET.ParseError as err:
        raise SsmlError(f"malformed SSML: {err}") from None
    if _local(root.tag) != "speak":
        raise SsmlError(f"SSML must be a <speak> element, not <{_local(root.tag)}>")
    _check_depth(root)
    out: list[Segment] = []
    _walk(root, Style(lang=root.get(_XML_LANG)), out)
    merged = _merge(out)
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


def _walk(element: ET.Element, style: Style, out: list[Segment]) -> None:
    tag = _local(element.tag)
    lang = element.get(_XML_LANG)
    if lang:
        style = replace(style, lang=lang)
    if tag == "break":
        out.append(Pause(_break_ms(element), explicit=True))
    elif tag == "say-as":
        out.append(Say(say_as(element), style))
    elif tag == "sub":
        alias = element.get("alias")
        if alias is None:
            raise SsmlError("<sub> needs an alias")
        out.append(Say(_clean(alias), style))
    elif tag == "phoneme":
        out.append(Say(_phoneme(element), style))
    else:
        if tag == "prosody":
            style = replace(
                style,
                rate=style.rate * _rate(element.get("rate")),
                volume=style.volume * _volume(element.get("volume")),
            )
        elif tag == "voice":
            name = element.get("name")
            if name:
                style = replace(style, voice=name.strip())
        if element.text:
            out.append(Say(_clean(element.text), style))
        for child in element:
            _walk(child, style, out)
            if child.tail:
                out.append(Say(_clean(child.tail), style))
        if tag == "s":
            out.append(Pause(0))
        elif tag == "p":
            out.append(Pause(_PARAGRAPH_MS))
        return
    # Elements spoken whole: their tail is spoken by the parent.


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


_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$", re.IGNORECASE)


def _break_ms(element: ET.Element) -> int:
    time = element.get("time")
    if time is not None:
        match = _TIME.match(time)
        if not match:
            raise SsmlError(f"<break time={time!r}>: use e.g. 500ms or 1.5s")
        value = float(match.group(1)) * (1 if match.group(2).lower() == "ms" else 1000)
        return int(min(value, MAX_BREAK_MS))
    strength = element.get("strength", "medium")
    if strength not in _STRENGTH_MS:
        raise SsmlError(f"<break strength={strength!r}>: use one of {', '.join(_STRENGTH_MS)}")
    return _STRENGTH_MS[strength]


_PERCENT = re.compile(r"^([+-]?)(\d+(?:\.\d+)?)%$")


def _rate(value: str | None) -> float:
    if value is None:
        return 1.0
    value = value.strip().lower()
    if value in _RATES:
        return _RATES[value]
    match = _PERCENT.match(value)
    try:
        if match:
            number = float(match.group(2)) / 100
            rate = 1 + number if match.group(1) == "+" else 1 - number if match.group(1) else number
        else:
            rate = float(value)
    except ValueError:
        rate = -1
    if not 0 < rate <= 10:
        raise SsmlError(f"<prosody rate={value!r}>: use e.g. slow, fast, 80% or +20%")
    return rate


_DB = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*db$")


def _volume(value: str | None) -> float:
    if value is None:
        return 1.0
    value = value.strip().lower()
    if value in _VOLUMES:
        return _VOLUMES[value]
    match = _DB.match(value)
    if match and abs(float(match.group(1))) <= 40:
        return float(10 ** (float(match.group(1)) / 20))
    raise SsmlError(f"<prosody volume={value!r}>: use e.g. soft, loud or +6dB")


def _phoneme(element: ET.Element) -> str:
    ph = element.get("ph")
    if not ph or not ph.strip():
        raise SsmlError("<phoneme> needs a ph attribute")
    alphabet = (element.get("alphabet") or "ipa").strip().lower()
    if alphabet == "ipa":
        phonemes = from_ipa(ph)
    elif alphabet in ("x-kokoro", "kokoro", "x-misaki", "misaki"):
        phonemes = ph
    else:
        raise SsmlError(f"<phoneme alphabet={alphabet!r}>: use ipa or x-kokoro")
    phonemes = _clean(phonemes).strip()
    return f" {PHONEMES_OPEN}{phonemes}{PHONEMES_CLOSE} "


def say_as(element: ET.Element) -> str:
    """The words a <say-as> stands for, as text the normalizer then reads."""
    kind = (element.get("interpret-as") or "").strip().lower()
    text = _clean("".join(element.itertext())).strip()
    try:
        return f" {said_as(kind, text, (element.get('format') or 'ymd').strip().lower())} "
    except ValueError as err:
        raise SsmlError(str(err)) from None
