"""A request event's fields, checked: its text, its voice, its text format.

The `wyoming` library's own parsers fail on malformed values; here each becomes a
`ProtocolError` the handler answers.
"""

from __future__ import annotations

from wyoming.event import Event
from wyoming.tts import SynthesizeVoice

from wyoming_kokoro.server.wyoming.wire import ProtocolError


def ssml_asked(event: Event) -> bool | None:
    """True for text_format "ssml"; None (decide from the text) otherwise."""
    text_format = event.data.get("text_format")
    if text_format is not None and not isinstance(text_format, str):
        raise ProtocolError("'text_format' must be a string")
    if text_format not in (None, "text", "ssml"):
        raise ProtocolError(f"text_format {text_format!r}: use text or ssml")
    return True if text_format == "ssml" else None


def text_of(event: Event) -> str:
    text = event.data.get("text")
    if not isinstance(text, str):
        raise ProtocolError(f"{event.type} needs a 'text' string")
    try:
        text.encode("utf-8")  # a lone surrogate is valid JSON, and stopped the worker pipe
    except UnicodeEncodeError as err:
        raise ProtocolError(f"{event.type} text is not valid Unicode") from err
    return text


def voice_of(event: Event) -> SynthesizeVoice | None:
    """The event's voice, checked: the library's parser fails on a malformed one.
    A null voice is no voice, the server's default, as over HTTP."""
    voice = event.data.get("voice")
    if voice is None:
        return None
    if not isinstance(voice, dict):
        raise ProtocolError("'voice' must be an object")
    for key in ("name", "language", "speaker"):
        if voice.get(key) is not None and not isinstance(voice[key], str):
            raise ProtocolError(f"voice '{key}' must be a string")
    # As the library reads it: a name wins over a language.
    if voice.get("name") is not None:
        return SynthesizeVoice(name=voice["name"], speaker=voice.get("speaker"))
    if voice.get("language") is not None:
        return SynthesizeVoice(language=voice["language"])
    return None
