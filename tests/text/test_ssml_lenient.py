"""SSML that is not perfect is still spoken: what the parser cannot use is read as its
plain content, a document that is not well-formed XML as plain text without its tags.
Only the deliberate security refusals (DTDs, entities, depth, total silence) remain."""

from __future__ import annotations

import json
import re
import string
import urllib.request

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

from wyoming_kokoro.text.ssml import Pause, Say, SsmlError, Style, parse


def _words(doc: str) -> list[str]:
    return " ".join(s.text for s in parse(doc) if isinstance(s, Say)).split()


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ("<speak>Tom & Jerry are here.</speak>", ["Tom", "&", "Jerry", "are", "here."]),
        ("<speak> is the root element of SSML. You put your text inside it. That is all.",
         ["is", "the", "root", "element", "of", "SSML.", "You", "put", "your", "text",
          "inside", "it.", "That", "is", "all."]),
        ('<speak><amazon:effect name="whispered">Quiet now.</amazon:effect></speak>',
         ["Quiet", "now."]),
        ("<speak>Hello <break time='1s'> world</speak>", ["Hello", "world"]),
        ("<voice>not speak</voice>", ["not", "speak"]),
        ("<speak>If 5 < 6 and 7 > 3, say so.", ["If", "5", "<", "6", "and", "7", ">", "3,",
                                                 "say", "so."]),
    ],
)  # fmt: skip
def test_a_document_that_is_not_well_formed_is_read_as_plain_text(
    doc: str, words: list[str]
) -> None:
    assert _words(doc) == words


@pytest.mark.parametrize(
    ("element", "said"),
    [
        ("<say-as interpret-as='digits'>1234</say-as>", "1 2 3 4"),
        ("<say-as interpret-as='spell-out'>abc</say-as>", "A B C"),
        ("<say-as interpret-as='date' format='ymd'>2024-99-99</say-as>", "2024-99-99"),
        ("<say-as interpret-as='ordinal'>many</say-as>", "many"),
        ("<say-as interpret-as='colour'>red</say-as>", "red"),
        ("<sub>HA</sub>", "HA"),
        ("<phoneme alphabet='sampa' ph='x'>tomato</phoneme>", "tomato"),
        ("<phoneme>tomato</phoneme>", "tomato"),
        ("<prosody rate='warp' volume='deafening'>fast</prosody>", "fast"),
    ],
)
def test_what_cannot_be_used_is_read_as_its_content(element: str, said: str) -> None:
    (segment,) = parse(f"<speak>{element}</speak>")
    assert isinstance(segment, Say) and segment.text.strip() == said
    assert segment.style == Style()


def test_a_break_without_a_unit_is_milliseconds_and_bounded() -> None:
    assert parse("<speak>a<break time='2000'/>b</speak>")[1] == Pause(2000, True)
    assert parse("<speak>a<break time='99999999'/>b</speak>")[1] == Pause(10_000, True)


@pytest.mark.parametrize(
    "time", ["soon", "nan", "infs", "-1s", "-0.5s", "1e308s", "1,5s", "0x10ms", "1.5 seconds", ""]
)
def test_a_break_that_cannot_be_read_is_the_default_break(time: str) -> None:
    assert parse(f'<speak>a<break time="{time}"/>b</speak>')[1] == Pause(400, True)


@pytest.mark.parametrize(
    ("rate", "clamped"),
    [
        ("10000%", 10.0),
        ("+1e9%", 10.0),
        ("0%", 0.1),
        ("-100%", 0.1),
        ("11", 10.0),
        ("inf", 10.0),
        ("1e308", 10.0),
        ("-1", 0.1),
        ("nan", 1.0),
        ("warp", 1.0),
    ],
)
def test_a_prosody_rate_out_of_range_is_clamped_and_one_unread_is_none(
    rate: str, clamped: float
) -> None:
    (segment,) = parse(f'<speak><prosody rate="{rate}">a</prosody></speak>')
    assert isinstance(segment, Say) and segment.style.rate == clamped


def test_a_warning_names_the_element_not_the_text(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="wyoming_kokoro.text.ssml"):
        parse("<speak><say-as interpret-as='date'>secret 2024-99-99</say-as>"
              "<say-as interpret-as='date'>secret 2024-99-98</say-as></speak>")  # fmt: skip
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and "say-as" in warned[0] and "secret" not in warned[0]


# Capitals: never a tag, attribute or value of the markup around them (all lower case).
WORDS = st.lists(st.text(string.ascii_uppercase, min_size=1, max_size=8), min_size=1, max_size=6)
ATTRIBUTES = st.sampled_from(
    ["", " time='2000'", " time='x'", " rate='10000%'", " interpret-as='digits'",
     " interpret-as='date' format='ymd'", " alias=''", " ph='' alphabet='q'",
     " strength='loud'", " volume='+99dB'", " name='whispered'", ' a="&"', " b='<'"]
)  # fmt: skip
TAGS = st.sampled_from(
    ["s", "p", "break", "prosody", "say-as", "sub", "phoneme", "voice", "emphasis",
     "amazon:effect", "unknown", "lang", "mark", "audio"]
)  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A document of plain words inside (maybe broken) elements, and its words."""
    words = draw(WORDS)
    parts = ["<speak>"]
    for word in words:
        tag, attrs = draw(TAGS), draw(ATTRIBUTES)
        parts.append(f" <{tag}{attrs}>{word}</{tag}> " if draw(st.booleans()) else f" {word} ")
    parts.append("</speak>")
    doc = "".join(parts)
    for _ in range(draw(st.integers(0, 3))):  # drop or insert a character
        at = draw(st.integers(0, len(doc)))
        if draw(st.booleans()):
            doc = doc[:at] + doc[at + 1 :]
        else:
            doc = doc[:at] + draw(st.sampled_from("<>&/'\"= x")) + doc[at:]
    return doc, words


@settings(max_examples=150, deadline=None)
@given(documents())
def test_mutated_ssml_never_raises_and_keeps_its_words(case: tuple[str, list[str]]) -> None:
    doc, words = case
    try:
        segments = parse(doc)
    except SsmlError as err:  # only the deliberate refusals
        assert re.search(r"DTD|nested|add up", str(err)), err
        return
    said = " ".join(s.text for s in segments if isinstance(s, Say))
    # Each word survives unless a mutation hit it (a dropped or inserted character).
    # Whole in the document, not glued to a tag's name by a dropped '>' ("<breakA").
    survived = [w for w in words if re.search(rf"(?<![\w.:-]){w}(?![A-Z])", doc)]
    # Outside every tag: a dropped '>' can leave words inside one ("</lang  A  AA>"),
    # which markup parsers read as part of the tag.
    prose = re.sub(r"<[^<>]*>", " ", doc)
    for word in survived:
        if any(f"{mark}{word}" in doc for mark in ("<", "/", "'", '"', "=")):
            continue  # a mutation made it a tag's name or an attribute: markup, not text
        if not re.search(rf"(?<![\w.:-]){word}(?![A-Z])", prose):
            continue
        assert word in said or " ".join(word) in said, (doc, said)  # or spelled out


@pytest.fixture(scope="module")
def served():
    with ServerProcess("--http", "tcp://127.0.0.1:0") as server:
        yield server


TOM = "<speak>Tom & Jerry are here.</speak>"


def test_a_bare_ampersand_is_spoken_not_refused(served, listener) -> None:
    reply = run(synthesize(served.uri, TOM))
    assert not reply.errors, reply.errors
    assert len(reply.audio) / 2 / 24000 > 0.5
    listener.check_later("Tom and Jerry are here.", reply.audio)
    port = next(
        m.group(1)
        for line in served.log
        if (m := re.search(r"HTTP API on http://127\.0\.0\.1:(\d+)", line))
    )
    body = {"input": TOM, "voice": "jm_kumo", "response_format": "pcm"}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/audio/speech",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    audio = urllib.request.urlopen(request, timeout=120).read()
    assert len(audio) / 2 / 24000 > 0.5


def test_a_voice_or_language_that_cannot_be_used_is_the_requests_own() -> None:
    from wyoming_kokoro.catalog.presets import Choice
    from wyoming_kokoro.catalog.voices import VoiceError
    from wyoming_kokoro.server.ssml_plan import ssml_voicing

    def choose(name: str) -> Choice:
        raise VoiceError(f"no voice {name}")

    base = Choice("af_heart", 1.0, 1.0, "en-us")
    voicing = ssml_voicing(choose, base, 1.0)
    assert voicing(Style(voice="Joanna")) == ("af_heart", 1.0, "en-us", 1.0, (None, None))
    assert voicing(Style(lang="tlh-XX")) == ("af_heart", 1.0, "en-us", 1.0, (None, None))
