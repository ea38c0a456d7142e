"""SSML over Wyoming (text_format, or text opening with <speak>) and HTTP; SSE."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import tracemalloc
import urllib.error
import urllib.request

import pytest
import sseclient
from support.server_process import ServerProcess
from support.wyoming_io import collect, run, synthesize
from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from wyoming_kokoro.text.ssml import Pause, Say, SsmlError, Style, is_ssml, parse

BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">'
        for i in range(1, 10)
    )
    + "]><speak>&lol9;</speak>"
)
EXTERNAL = (
    '<?xml version="1.0"?><!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]><speak>&x;</speak>'
)
NESTED = "<speak>" + "<s>" * 10_000 + "deep" + "</s>" * 10_000 + "</speak>"
HOSTILE = {"billion laughs": BILLION_LAUGHS, "external entity": EXTERNAL, "10,000 nested": NESTED}


def test_segments_of_a_document() -> None:
    doc = (
        '<speak xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US">Hello'
        '<break time="1.5s"/><prosody rate="slow">slow <break strength="weak"/></prosody>'
        '<voice name="jf_alpha"><s>Alpha</s></voice>'
        '<sub alias="World Wide Web">WWW</sub> <say-as interpret-as="ordinal">22</say-as>'
        "</speak>"
    )
    en = Style(lang="en-US")
    assert parse(doc) == [
        Say("Hello", en),
        Pause(1500, explicit=True),
        Say("slow ", Style(rate=0.75, lang="en-US")),
        Pause(200, explicit=True),
        Say("Alpha", Style(voice="jf_alpha", lang="en-US")),
        Pause(0),
        Say("World Wide Web 22nd ", en),
    ]


@pytest.mark.parametrize(
    ("element", "said"),
    [
        ('<say-as interpret-as="characters">KQX</say-as>', "K Q X"),
        ('<say-as interpret-as="cardinal">1,234</say-as>', "1234"),
        ('<say-as interpret-as="date" format="dmy">5/3/2024</say-as>', "2024-03-05"),
        ('<say-as interpret-as="time">7:30 pm</say-as>', "7:30 pm"),
        ('<say-as interpret-as="telephone">+1 555-0100</say-as>', "plus 1, 5 5 5, 0 1 0 0"),
        ('<phoneme alphabet="ipa" ph="ˈtoʊmɑːtoʊ">tomato</phoneme>', "\ue000ˈtOmɑtO\ue001"),
        ('<phoneme alphabet="x-kokoro" ph="kˈOkəɹO">Kokoro</phoneme>', "\ue000kˈOkəɹO\ue001"),
    ],
)
def test_say_as_sub_and_phoneme(element: str, said: str) -> None:
    (segment,) = parse(f"<speak>{element}</speak>")
    assert isinstance(segment, Say) and segment.text.strip() == said


@pytest.mark.parametrize(
    "doc",
    [
        *HOSTILE.values(),
        # A DTD is refused even in text that is no XML: never read, even as plain text.
        '<!DOCTYPE x [<!ENTITY a "lollollol">]><speak>&a;',
        '<speak>hi <!ENTITY a "lollollol"></speak>',
    ],
)
def test_hostile_ssml_is_an_error_at_once(doc: str) -> None:
    # Refused before anything is expanded: the parse allocates next to nothing (a
    # billion laughs expanded would take gigabytes), and no entity text comes back.
    tracemalloc.start()
    try:
        with pytest.raises(SsmlError) as error:
            parse(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, peak
    assert "lol" * 3 not in str(error.value)


LONG = "7" * 5_000  # past Python's int-string limit (4,300 digits by default)
LONG_DATES = [
    f'<speak><say-as interpret-as="date">{LONG}-01-02</say-as></speak>',
    f'<speak><say-as interpret-as="date" format="y">{LONG}</say-as></speak>',
    f'<speak><say-as interpret-as="date" format="dmy">1/{LONG}/2024</say-as></speak>',
]


@pytest.mark.parametrize("doc", LONG_DATES)
def test_a_date_of_thousands_of_digits_is_read_as_written(doc: str) -> None:
    (segment,) = parse(doc)
    assert isinstance(segment, Say) and LONG in segment.text


# <say-as interpret-as="date"> as each language says it (after its normalizer):
# the month's name in the voice's language, never English words in another.
DATES = {
    "en-us": ("March fifth, twenty twenty-four", "March fifth", "March twenty twenty-four"),
    "en-gb": ("the fifth of March, twenty twenty-four", "the fifth of March",
              "March twenty twenty-four"),
    "es": ("cinco de marzo de dos mil veinticuatro", "cinco de marzo",
           "marzo de dos mil veinticuatro"),
    "fr-fr": ("cinq mars deux mille vingt-quatre", "cinq mars", "mars deux mille vingt-quatre"),
    "it": ("cinque marzo duemilaventiquattro", "cinque marzo", "marzo duemilaventiquattro"),
    "pt-br": ("cinco de março de dois mil e vinte e quatro", "cinco de março",
              "março de dois mil e vinte e quatro"),
    "hi": ("पाँच मार्च दो हज़ार चौबीस", "पाँच मार्च", "मार्च दो हज़ार चौबीस"),
    "ja": ("今日は2024年3月5日です", "今日は3月5日です", "今日は2024年3月です"),
    "zh": ("今天是二零二四年三月五日", "今天是三月五日", "今天是二零二四年三月"),
}  # fmt: skip
_AROUND = {"ja": ("今日は", "です"), "zh": ("今天是", "")}


@pytest.mark.parametrize("lang", list(DATES))
def test_a_date_is_said_in_the_voices_language(lang: str) -> None:
    from wyoming_kokoro.text.normalize import normalize

    before, after = _AROUND.get(lang, ("", ""))
    forms = [
        ("dmy", "5/3/2024"),  # 5 March 2024, written day first
        ("md", "3-5"),
        ("ym", "2024.03"),
    ]
    for (fmt, written), expected in zip(forms, DATES[lang], strict=True):
        doc = f'<speak>{before}<say-as interpret-as="date" format="{fmt}">{written}</say-as>'
        (segment,) = parse(doc + f"{after}</speak>")
        assert isinstance(segment, Say)
        said = normalize(segment.text.strip(), lang)
        if lang in ("ja", "zh"):  # the spaces around a say-as are no words there
            said = said.replace(" ", "")
        assert said == expected, (fmt, lang)


def test_a_day_first_date_of_the_first_of_the_month() -> None:
    from wyoming_kokoro.text.normalize import normalize

    (segment,) = parse('<speak><say-as interpret-as="date" format="dm">1.6</say-as></speak>')
    assert isinstance(segment, Say)
    said = {lang: normalize(segment.text, lang) for lang in ("fr-fr", "it", "pt-br", "es")}
    assert said == {"fr-fr": "premier juin", "it": "primo giugno", "pt-br": "primeiro de junho",
                    "es": "uno de junio"}  # fmt: skip


# Absurd break times and prosody rates: test_ssml_lenient.py (read, never refused).


def test_a_break_of_many_digits_is_the_longest_break() -> None:
    assert parse(f'<speak>a<break time="{"9" * 5000}s"/>b</speak>')[1] == Pause(10_000, True)


def test_breaks_in_a_row_add_up_to_the_longest_break_at_most() -> None:
    doc = "<speak>a" + '<break time="10s"/>' * 1000 + "b</speak>"
    assert parse(doc)[1] == Pause(10_000, True)


def test_thousands_of_breaks_are_refused_not_made_into_silence() -> None:
    # Each 10 s apart from the next by a word: 10,000 of them would be 28 hours of
    # silence (4.8 GB of PCM) planned at once.
    doc = "<speak>" + 'a<break time="10s"/>' * 10_000 + "</speak>"
    tracemalloc.start()
    try:
        with pytest.raises(SsmlError, match="add up"):
            parse(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000, peak


def test_a_break_replaces_the_pauses_of_structure_at_its_place() -> None:
    doc = '<speak><p>One.</p><break time="1s"/><p>Two.</p><s>Three.</s><s>Four.</s></speak>'
    pauses = [s for s in parse(doc) if isinstance(s, Pause)]
    # The last </s> closes the document: no pause before nothing.
    assert pauses == [Pause(1000, True), Pause(250), Pause(0)]


def test_a_break_counts_the_pause_of_the_text_before_it() -> None:
    long_break, short_break = Pause(1500, True), Pause(100, True)
    assert long_break.silence_ms("The door is locked.") == 1250
    assert long_break.silence_ms("The door is locked.", speed=0.5) == 1000  # a slower pause
    assert long_break.silence_ms("The door, ") == 1400
    assert long_break.silence_ms("Turn left") == 1500  # mid-clause: no pause of its own
    assert long_break.silence_ms("") == 1500  # nothing said before it
    assert short_break.silence_ms("The door is locked.") == 0  # the sentence's pause stays
    assert Pause(250).silence_ms("The door is locked.") == 250  # </p>: on top, as ever


def test_what_counts_as_ssml() -> None:
    assert is_ssml("  <speak>hi</speak>") and is_ssml('<?xml version="1.0"?>\n<speak/>')
    assert not is_ssml("speak <b>now</b>") and not is_ssml("<b>bold</b>")
    assert is_ssml("<!DOCTYPE x []><speak/>")


@pytest.fixture(scope="module")
def served():
    with ServerProcess("--http", "tcp://127.0.0.1:0") as server:
        yield server


def _port(server: ServerProcess) -> int:
    for line in server.log:
        if m := re.search(r"HTTP API on http://127\.0\.0\.1:(\d+)", line):
            return int(m.group(1))
    raise AssertionError("no HTTP port in the log")


def _post(server: ServerProcess, body: dict[str, object]) -> urllib.request.Request:
    return urllib.request.Request(
        f"http://127.0.0.1:{_port(server)}/v1/audio/speech",
        json.dumps({"voice": "jm_kumo", "response_format": "pcm", **body}).encode(),
        {"Content-Type": "application/json"},
    )


async def _ssml(uri: str, text: str, text_format: str | None = "ssml"):
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text, text_format=text_format).event())
        return await collect(client, "audio-stop", 120)


DOOR = "The door is locked.", "The lights are off."


def test_a_break_lengthens_the_audio_by_its_time_and_no_tag_is_heard(served, listener) -> None:
    first, second = DOOR
    without = run(_ssml(served.uri, f'<speak>{first}<break time="0ms"/>{second}</speak>'))
    with_break = run(_ssml(served.uri, f'<speak>{first}<break time="700ms"/>{second}</speak>'))
    assert not without.errors and not with_break.errors
    # Both cut after the first sentence; its own pause (250 ms) counts toward the break.
    added_ms = (len(with_break.audio) - len(without.audio)) / 48
    assert abs(added_ms - (700 - 250)) <= 30, added_ms
    listener.check_later(" ".join(DOOR), with_break.audio, unheard=r"speak|break|time|ms\b")


# Sentences long enough to be model calls of their own with or without a break: the
# audio around a break is then the same sound, and only the silence differs.
SENTENCES = (
    "The front door of the house is locked now.",
    "All of the lights in the kitchen are off.",
    "The heating will start again at six tonight.",
)
SENTENCE_PAUSE_MS = 250  # what a sentence end is followed by (audio.pause_after)


def _gaps_ms(pcm: bytes, longer_than_ms: float = 300) -> list[float]:
    """The quiet stretches of speech, in order: runs under -40 dBFS this long or longer."""
    import numpy as np

    loud = np.flatnonzero(np.abs(np.frombuffer(pcm, np.int16)) > 328)
    steps = np.diff(loud) / 24
    return [float(step) for step in steps if step >= longer_than_ms]


@pytest.mark.model
def test_a_break_is_the_silence_after_a_sentence_not_added_to_its_pause() -> None:
    # The rule: a break's time is the silence between the words around it. The pause a
    # sentence end brings counts toward it, never on top of it: a 1.5 s break after a
    # sentence is 1.5 s of silence, 1.25 s more than the sentence's own pause; a break
    # shorter than that pause leaves the pause. Both breaks share one synthesis.
    asked_ms = (1500, 200)
    plain = "<speak>" + " ".join(SENTENCES) + "</speak>"
    doc = "<speak>" + SENTENCES[0]
    for ms, sentence in zip(asked_ms, SENTENCES[1:], strict=True):
        doc += f'<break time="{ms}ms"/>{sentence}'
    # Every call decoded whole: a first sentence in windows, or a later one when the CPU
    # is slow, ends where its trim falls, a frame from where the whole decode's does.
    with ServerProcess("--decode", "whole", "--idle-timeout", "60") as whole:
        without = run(_ssml(whole.uri, plain))
        with_breaks = run(_ssml(whole.uri, doc + "</speak>"))
    assert not without.errors and not with_breaks.errors
    added = [max(ms, SENTENCE_PAUSE_MS) - SENTENCE_PAUSE_MS for ms in asked_ms]
    total_ms = (len(with_breaks.audio) - len(without.audio)) / 48
    assert abs(total_ms - sum(added)) <= 25, (total_ms, added)
    # Break by break: the quiet between the sentences grew by what each break adds.
    between, between_breaks = _gaps_ms(without.audio), _gaps_ms(with_breaks.audio)
    assert len(between) == len(between_breaks) >= 2, (between, between_breaks)
    grown = [b - a for a, b in zip(between, between_breaks, strict=True)]
    assert sorted(grown, reverse=True)[:2] == pytest.approx(sorted(added, reverse=True), abs=25)


def test_sub_and_say_as_are_heard_as_asked(served, listener) -> None:
    doc = (
        '<speak>Visit the <sub alias="World Wide Web">WWW</sub> today. '
        'It is the <say-as interpret-as="ordinal">3</say-as> time, and the code is '
        '<say-as interpret-as="characters">KQX</say-as>.</speak>'
    )
    reply = run(_ssml(served.uri, doc, text_format=None))  # <speak> alone says it is SSML
    assert not reply.errors
    listener.check_later(
        "Visit the World Wide Web today. It is the third time, and the code is K Q X.",
        reply.audio,
    )


async def _streamed(uri: str, text: str, piece: int = 9):
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(SynthesizeStart().event())
        for i in range(0, len(text), piece):
            await client.write_event(SynthesizeChunk(text=text[i : i + piece]).event())
        await client.write_event(Synthesize(text=text).event())
        await client.write_event(SynthesizeStop().event())
        return await collect(client, "synthesize-stopped", 120)


def test_streamed_ssml_is_spoken_once_complete(served) -> None:
    first, second = DOOR
    doc = f'<speak>{first}<break time="700ms"/>{second}</speak>'
    whole = run(_ssml(served.uri, doc))
    streamed = run(_streamed(served.uri, doc))
    assert streamed.types[-1] == "synthesize-stopped" and not streamed.errors
    assert abs(len(streamed.audio) - len(whole.audio)) / 48 <= 30


async def _describe(uri: str) -> str:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 5)
        assert event is not None
        return event.type


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_ssml_is_refused_quickly_and_the_server_serves_on(served, name: str) -> None:
    reply = run(_ssml(served.uri, HOSTILE[name]))
    assert reply.errors and "SSML" in reply.errors[0], reply.types
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(_post(served, {"input": HOSTILE[name]}), timeout=30)
    assert refused.value.code == 400
    error = json.loads(refused.value.read())["error"]
    assert error["code"] == "invalid_ssml" and "lol" not in error["message"]
    assert run(_describe(served.uri)) == "info"


def test_too_much_silence_in_ssml_is_a_400_and_an_error_event(served) -> None:
    # Refused while the document is read, before anything is spoken: OpenAI's error
    # shape over HTTP, an error event over Wyoming, and the server serves on.
    doc = "<speak>" + 'a<break time="10s"/>' * 31 + "</speak>"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(_post(served, {"input": doc}), timeout=30)
    assert refused.value.code == 400
    error = json.loads(refused.value.read())["error"]
    assert error["code"] == "invalid_ssml" and "add up" in error["message"]
    assert error["type"] == "invalid_request_error" and error["param"] == "input"
    reply = run(_ssml(served.uri, doc))
    assert reply.errors and "add up" in reply.errors[0] and not reply.audio
    assert run(_describe(served.uri)) == "info"


def test_malformed_ssml_is_read_as_plain_text_without_its_tags(served) -> None:
    reply = run(_ssml(served.uri, "<speak>Hello <break time='1s'> world</speak>"))
    assert not reply.errors and reply.audio
    plain = run(_ssml(served.uri, "Hello there.", text_format="ssml"))
    assert not plain.errors and plain.audio


def test_sse_events_read_by_a_real_sse_client(served) -> None:
    text = "The door is locked."
    plain = urllib.request.urlopen(_post(served, {"input": text}), timeout=120).read()
    response = urllib.request.urlopen(
        _post(served, {"input": text, "stream_format": "sse"}), timeout=120
    )
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = [json.loads(e.data) for e in sseclient.SSEClient(response).events()]
    assert [e["type"] for e in events[:-1]] == ["speech.audio.delta"] * (len(events) - 1)
    assert events[-1] == {
        "type": "speech.audio.done",
        "usage": {"input_tokens": len(text), "output_tokens": 0, "total_tokens": len(text)},
    }
    audio = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    # The same speech, in events. Two requests for the same text may be decoded in
    # windows of other sizes (they follow the CPU's pace), whose edges can trim
    # differently by less than one frame (600 samples).
    assert abs(len(audio) - len(plain)) <= 600 * 2


def test_wyoming_still_speaks_plain_text(served) -> None:
    reply = run(synthesize(served.uri, "<b>Bold</b> words are read, tags are not."))
    assert not reply.errors and reply.audio
