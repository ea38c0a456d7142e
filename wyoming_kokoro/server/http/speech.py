"""`POST /v1/audio/speech`: text → the fair scheduler → encoded audio, streamed;
`POST /dev/captioned_speech`: the same with the words' times (captioned.py).

The status line waits for the first audio (so a worker that cannot start is a
clear 503, not a broken body); from then on every piece is encoded and sent as
soon as the worker has spoken it, with chunked transfer. A client that goes
away — or stops reading — has its waiting pieces dropped from the queue.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass

from aiohttp import web

from wyoming_kokoro.catalog.presets import Choice
from wyoming_kokoro.server.http.captioned import Timed, send_captioned, timestamps
from wyoming_kokoro.server.http.encoders import (
    FORMATS,
    Encoder,
    UnsupportedFormat,
    encoded,
    finished,
    make_encoder,
)
from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.request import SpeechRequest, Voices, parse_speech
from wyoming_kokoro.server.redact import for_client, json_failure, loads_json
from wyoming_kokoro.server.scheduler import Scheduler
from wyoming_kokoro.server.ssml_plan import ssml_voicing
from wyoming_kokoro.server.turns import PieceFailed, SynthesisError
from wyoming_kokoro.server.utterance import SpokenText
from wyoming_kokoro.server.wyoming.wire import write_or_abort
from wyoming_kokoro.text.ssml import SsmlError, is_ssml
from wyoming_kokoro.text.ssml import parse as parse_ssml
from wyoming_kokoro.timeline import WordTime

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpeechConfig:
    """What every speech request shares; built once by the server."""

    scheduler: Scheduler
    voices: Voices
    next_client_id: Callable[[], int]  # shared with the Wyoming side: one id space
    max_streams: int  # speech requests served at once; more get 503
    write_timeout: float  # a client that reads nothing this long is dropped
    read_timeout: float  # the body must have arrived this long after the headers


SPEECH_CONFIG: web.AppKey[SpeechConfig] = web.AppKey("speech_config", SpeechConfig)
ACTIVE_STREAMS: web.AppKey[set[int]] = web.AppKey("active_streams", set)


def require_json(request: web.Request) -> None:
    """Only JSON, said so: a web page can send text/plain or a form to any server
    without a CORS preflight, and so could make this one speak."""
    if request.content_type.lower() != "application/json":
        raise ApiError(
            415,
            f"the body must be application/json, not {request.content_type}",
            code="unsupported_media_type",
        )
    charset = (request.charset or "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise ApiError(415, f"JSON must be UTF-8, not {charset}", code="unsupported_media_type")


async def read_body(request: web.Request, timeout: float) -> object:
    try:
        raw = await asyncio.wait_for(request.read(), timeout)
    except asyncio.TimeoutError:
        # Hang up: draining the rest of a body this slow would hold the connection on.
        raise ApiError(
            408, f"the body did not arrive within {timeout:g} s", code="timeout", close=True
        ) from None
    return decode_body(raw)


def decode_body(raw: bytes) -> object:
    """The JSON of a body (its charset was checked: UTF-8), or a 400 that says why not."""
    try:
        return loads_json(raw)
    except (ValueError, RecursionError) as err:  # also a number of over 4,300 digits
        why = json_failure(err)
        raise ApiError(400, f"the request body is {why}", code="invalid_json") from None


async def speech(request: web.Request) -> web.StreamResponse:
    return await _serve(request, captioned=False)


async def captioned_speech(request: web.Request) -> web.StreamResponse:
    """Kokoro-FastAPI's captioned speech: the audio as base64 in JSON, with timestamps."""
    return await _serve(request, captioned=True)


async def _serve(request: web.Request, captioned: bool) -> web.StreamResponse:
    config = request.app[SPEECH_CONFIG]
    require_json(request)
    active = request.app[ACTIVE_STREAMS]
    # The slot is taken before the body is read: a refusal comes at once, and
    # uploads waiting for their slot cannot pile up.
    if len(active) >= config.max_streams:
        raise ApiError(
            503, f"too many speech requests at once (limit {config.max_streams})", code="busy"
        )
    client = config.next_client_id()
    active.add(client)
    encoder: Encoder | None = None
    try:
        body = await read_body(request, config.read_timeout)
        speech_request = parse_speech(body, config.voices, captioned)
        try:
            encoder = make_encoder(speech_request.response_format, speech_request.stream)
        except UnsupportedFormat as err:
            raise ApiError(400, str(err), "response_format", "unsupported_format") from err
        return await _stream(request, config, speech_request, encoder, client, captioned)
    finally:
        active.discard(client)
        if encoder is not None:
            await _close(encoder)


async def _close(encoder: Encoder) -> None:
    if encoder.blocking:  # in a thread: close waits for an encode a hang-up left running
        await asyncio.to_thread(encoder.close)
    else:
        encoder.close()


async def _stream(
    request: web.Request,
    config: SpeechConfig,
    speech_request: SpeechRequest,
    encoder: Encoder,
    client: int,
    captioned: bool = False,
) -> web.StreamResponse:
    scheduler = config.scheduler
    audio: AsyncGenerator[Timed, None] | None = None
    try:
        # Inside the try: pieces are queued as the text is split, and a failure
        # after the first must still free them (they would keep the worker loaded).
        spoken = SpokenText(
            scheduler,
            client,
            speech_request.voice,
            speech_request.speed,
            speech_request.lang,
            config.voices.max_text_chars,
            volume=speech_request.volume * config.voices.volume,
            lead_ms=_either(speech_request.lead_ms, config.voices.lead_ms),
            tail_ms=_either(speech_request.tail_ms, config.voices.tail_ms),
            words=speech_request.words,
            pauses=speech_request.pauses,
            normalization=speech_request.normalization,
        )
        await _add_input(spoken, speech_request, config)
        spoken.finish()
        audio = spoken.timed_audio()
        if spoken.pieces == 0:
            raise ApiError(
                422, "'input' has nothing to speak (only markup or symbols)", "input", "no_speech"
            )
        try:
            first = await anext(audio)
        except StopAsyncIteration:
            first = (b"", [])
        except PieceFailed as err:
            # The request's text is the cause: a 4xx, which clients do not retry (a 503
            # they retry, and it fails the same way every time). 422: the JSON is
            # well formed, what it asks cannot be done, as for input with nothing to say.
            _LOGGER.warning("HTTP client %d: the input could not be spoken: %s", client, err)
            raise ApiError(
                422, f"the input could not be spoken: {err}", "input", "unspeakable_input"
            ) from err
        except SynthesisError as err:
            # The log has the whole error (the scheduler's); the client, a short one.
            raise ApiError(
                503, f"speech synthesis is unavailable: {err}", code="unavailable"
            ) from err
        sse = speech_request.stream_format == "sse" and not captioned
        kind = _content_type(speech_request.response_format)
        if captioned:
            kind = "application/x-ndjson" if speech_request.stream else "application/json"
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream" if sse else kind,
                "X-Kokoro-Voice": speech_request.voice,
                "Cache-Control": "no-store",
            }
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        if captioned:
            await send_captioned(
                request, response, encoder, first, audio, config.write_timeout, speech_request
            )
        else:
            await _send(
                request,
                response,
                encoder,
                first,
                audio,
                config.write_timeout,
                len(speech_request.text) if sse else None,
            )
        spoken.log_spoken("HTTP", f", as {speech_request.response_format}")
        return response
    finally:
        # Whatever ended the request (done, failed, client gone), its queue is freed.
        scheduler.cancel(client)
        if audio is not None:
            await audio.aclose()


async def _add_input(spoken: SpokenText, speech: SpeechRequest, config: SpeechConfig) -> None:
    """Queue the input's pieces: plain text (a long one split in a thread, as over
    Wyoming), or an SSML document (parsed in a thread)."""
    if not is_ssml(speech.text):
        await spoken.add_text_async(speech.text, more=False)
        return
    offer = config.voices.current()
    base = Choice(speech.voice, speech.speed, speech.volume, speech.lang, speech.preset)
    voicing = ssml_voicing(
        lambda name: offer.choose(name, config.voices.speed), base, config.voices.volume
    )
    spoken.count(speech.text)
    try:
        planned = await asyncio.to_thread(
            lambda: spoken.plan_ssml(parse_ssml(speech.text), voicing)
        )
    except SsmlError as err:
        raise ApiError(400, str(err), param="input", code="invalid_ssml") from None
    spoken.submit(planned)


def _sse(event: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


async def _send(
    request: web.Request,
    response: web.StreamResponse,
    encoder: Encoder,
    first: Timed,
    audio: AsyncIterator[Timed],
    timeout: float,
    sse_chars: int | None = None,
) -> None:
    """Encoded audio as the body, or (sse_chars given) as OpenAI's SSE events, the
    words said from each delta on (if asked) in an event before it."""

    async def write(data: bytes, words: list[WordTime] | None = None) -> None:
        if words and sse_chars is not None:
            await send(_sse({"type": "speech.audio.timestamps", "timestamps": timestamps(words)}))
        if not data:
            return
        if sse_chars is not None:
            data = _sse({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})
        await send(data)

    async def send(data: bytes) -> None:
        await write_or_abort(response.write(data), request.transport, timeout)

    try:
        await write(await encoded(encoder, first[0]), first[1])
        async for pcm, words in audio:
            await write(await encoded(encoder, pcm), words)
        await write(await finished(encoder))
        if sse_chars is not None:
            # Kokoro counts no tokens: the input's characters stand in for them.
            usage = {"input_tokens": sse_chars, "output_tokens": 0, "total_tokens": sse_chars}
            await send(_sse({"type": "speech.audio.done", "usage": usage}))
        await response.write_eof()
    except SynthesisError as err:
        _LOGGER.warning("Speech failed mid-stream: %s", err)
        if sse_chars is not None:  # an event stream can still say so
            with contextlib.suppress(ConnectionError):
                await send(_sse({"type": "error", "error": {"message": for_client(str(err))}}))
                await response.write_eof()
                return
        # The status is sent: all a client can be told now is a cut-off body.
        if request.transport is not None:
            request.transport.abort()
    except ConnectionError as err:
        _LOGGER.debug("HTTP client went away: %s", err)


def _content_type(response_format: str) -> str:
    return FORMATS[response_format].content_type


def _either(preset: int | None, server: int) -> int:
    """A preset's own silence, else the server's (--lead-silence, --tail-silence)."""
    return server if preset is None else preset
