"""Bodies and events that are not JSON are refused in plain words, never Python's
("'utf-8' codec can't decode…", "Expecting value: line 1 column 1 (char 0)",
"decode using utf-8-sig"), and a UTF-8 byte order mark before valid JSON is
accepted. A null optional field of a speech request means its default."""

from __future__ import annotations

import asyncio
import codecs
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.request import Voices, parse_speech
from wyoming_kokoro.server.http.speech import decode_body
from wyoming_kokoro.server.wyoming.wire import Limits, ProtocolError, read_event

PYTHON_WORDS = ("codec", "Expecting", "char ", "utf-8-sig", "Error", "decode")


def event_failure(data: bytes) -> str:
    async def read() -> str:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        try:
            await read_event(reader, Limits())
        except ProtocolError as err:
            return str(err)
        return ""

    return asyncio.run(read())


def body_failure(raw: bytes) -> str:
    try:
        decode_body(raw)
    except ApiError as err:
        return err.message
    return ""


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (b'{"input": "caf\xe9 au lait"}', "the request body is not UTF-8 (byte 15)"),
        (b"", "the request body is not valid JSON (line 1, column 1)"),
        (b'{"input": 1,\n  }', "the request body is not valid JSON (line 2, column 3)"),
    ],
)
def test_a_body_that_is_not_json_is_told_plainly(raw, plain) -> None:
    assert body_failure(raw) == plain


def test_a_byte_order_mark_before_json_is_accepted() -> None:
    assert decode_body(codecs.BOM_UTF8 + b'{"input": "Hi."}') == {"input": "Hi."}


@pytest.mark.parametrize(
    ("data", "plain"),
    [
        (b"\n", "event header is not valid JSON (line 1, column 1)"),
        (b'{"type": "x", "data_length": 2}\n\xff\xfe', "event data is not UTF-8 (byte 1)"),
        (b'{"type": "x", "data_length": 2}\n{]', "event data is not valid JSON (line 1, column 2)"),
    ],
)
def test_an_event_that_is_not_json_is_told_plainly(data, plain) -> None:
    assert event_failure(data) == plain


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40))
def test_no_python_wording_for_any_body_or_event(raw) -> None:
    for text in (body_failure(raw), event_failure(raw + b"\n")):
        assert not any(word in text for word in PYTHON_WORDS), text


VOICES = Voices(("af_heart", "jm_kumo"), "af_heart", 1.0, 1000)


@pytest.mark.parametrize(
    "field",
    ["model", "response_format", "stream_format", "speed", "voice", "lang_code", "stream"],
)
def test_a_null_optional_field_means_its_default(field) -> None:
    body = {"input": "Hello.", field: None}
    default = parse_speech({"input": "Hello."}, VOICES)
    assert parse_speech(body, VOICES) == default
    assert json.dumps(body)  # as a client sends it
