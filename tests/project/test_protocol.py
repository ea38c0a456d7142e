"""Every message of the worker protocol, and every event the Wyoming door reads, round-tripped.

The message classes are found in `wyoming_kokoro.protocol` itself, and their example
values are made from their field types: a message added there is tested here without
a line changed (or this test names the field type it cannot yet make a value for).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import io
import types
import typing
from typing import Any

import pytest
from wyoming.event import Event, read_event, write_event
from wyoming.info import Describe
from wyoming.ping import Ping
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from wyoming_kokoro import protocol
from wyoming_kokoro.protocol import BadMessage, Message, decode
from wyoming_kokoro.server.wyoming.wire import Limits, ProtocolError
from wyoming_kokoro.server.wyoming.wire import read_event as careful_read_event


def _message_classes() -> list[type[Message]]:
    found = [
        cls
        for _, cls in inspect.getmembers(protocol, inspect.isclass)
        if issubclass(cls, Message) and cls is not Message
    ]
    return sorted(found, key=lambda cls: cls.__name__)


MESSAGES = _message_classes()

# One value a type, not its default: a field that a round trip loses shows.
_SCALARS: dict[Any, Any] = {
    int: 7,
    float: 1.25,
    str: "Die Tür ist offen. 扉が開いています。",
    bool: True,
    bytes: b"\x01\x00\xff\x7f",
}


def _value(hint: Any) -> Any:
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _value(next(arg for arg in args if arg is not type(None)))
    if origin is list:
        return [_value(args[0]), _value(args[0])]
    if origin is dict:
        return {"voice": "af_heart", "threads": 2, "dirs": ["/data"], "nested": {"a": None}}
    raise AssertionError(f"test_protocol makes no value of type {hint!r} yet: add one")


def _example(cls: type[Message], *, full: bool) -> Message:
    """Every field set (full) or only those without a default."""
    hints = typing.get_type_hints(cls)
    values = {
        f.name: _value(hints[f.name])
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if full or (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    }
    return cls(**values)


def _over_the_wire(event: Event) -> Event:
    buffer = io.BytesIO()
    write_event(event, buffer)
    buffer.seek(0)
    back = read_event(buffer)
    assert back is not None
    assert buffer.read() == b"", "one event, nothing after it"
    return back


def test_every_message_class_is_found_and_has_its_own_type() -> None:
    assert len(MESSAGES) >= 11
    names = [cls.type for cls in MESSAGES]
    assert len(set(names)) == len(names), names
    assert all(dataclasses.is_dataclass(cls) for cls in MESSAGES)


@pytest.mark.parametrize("full", [True, False], ids=["every-field", "required-only"])
@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_message_round_trips_through_the_wire(cls: type[Message], full: bool) -> None:
    message = _example(cls, full=full)
    event = message.event()
    assert event.type == cls.type
    back = decode(_over_the_wire(event))
    assert type(back) is cls
    assert back == message


def test_audio_carries_its_pcm_as_the_payload_not_in_the_json() -> None:
    audio = protocol.Audio(id=3, more=True, pcm=b"\x00\x01" * 10, window=True)
    event = audio.event()
    assert event.payload == audio.pcm
    assert "pcm" not in (event.data or {})


@pytest.mark.parametrize(
    ("event", "says"),
    [
        (Event("no-such-message", {}), "unknown worker message"),
        (Event("piece", {"id": 1}), "malformed 'piece'"),  # text and voice missing
        (Event("drop", {"id": 1, "extra": True}), "malformed 'drop'"),
        (Event("exited", {"pid": 1}), "malformed 'exited'"),
        (Event("stop", {"id": 1}), "malformed 'stop'"),
    ],
    ids=["unknown-type", "missing-fields", "unknown-field", "one-missing", "no-fields-taken"],
)
def test_malformed_messages_are_bad_messages(event: Event, says: str) -> None:
    with pytest.raises(BadMessage, match=says):
        decode(_over_the_wire(event))


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_each_required_field_missing_is_a_bad_message(cls: type[Message]) -> None:
    event = _example(cls, full=False).event()
    required = [
        f.name
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    for name in required:
        data = {k: v for k, v in (event.data or {}).items() if k != name}
        with pytest.raises(BadMessage, match=name):
            decode(Event(event.type, data, payload=event.payload))


# The Wyoming events the handler answers, as Home Assistant sends them, through the
# careful reader the handler uses (wire.read_event), back to the same values.
# (the library sends a voice's name, or else its language: never both)
VOICE = SynthesizeVoice(name="af_bella(2)+af_sky(1)")
CLIENT_EVENTS = [
    Describe(),
    Ping(text="are you there"),
    Synthesize(text="The garage door is open.", voice=VOICE),
    Synthesize(text="Ça va ?", voice=SynthesizeVoice(language="fr_FR")),
    Synthesize(text="<speak>Hi<break time='1s'/></speak>"),
    SynthesizeStart(voice=VOICE),
    SynthesizeChunk(text="The garage do"),
    SynthesizeStop(),
]


def _careful_round_trip(event: Event) -> Event | None:
    async def run() -> Event | None:
        buffer = io.BytesIO()
        write_event(event, buffer)
        reader = asyncio.StreamReader()
        reader.feed_data(buffer.getvalue())
        reader.feed_eof()
        back = await careful_read_event(reader, Limits())
        assert await careful_read_event(reader, Limits()) is None  # then a clean end
        return back

    return asyncio.run(run())


@pytest.mark.parametrize("eventable", CLIENT_EVENTS, ids=lambda e: type(e).__name__)
def test_client_events_round_trip_through_the_careful_reader(eventable: Any) -> None:
    back = _careful_round_trip(eventable.event())
    assert back is not None
    assert back.type == eventable.event().type
    assert type(eventable).is_type(back.type)
    assert type(eventable).from_event(back) == eventable


def test_a_truncated_client_event_is_a_protocol_error() -> None:
    buffer = io.BytesIO()
    write_event(Synthesize(text="cut short").event(), buffer)

    async def run() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(buffer.getvalue()[:-3])
        reader.feed_eof()
        await careful_read_event(reader, Limits())

    with pytest.raises(ProtocolError, match="in the middle of an event"):
        asyncio.run(run())
