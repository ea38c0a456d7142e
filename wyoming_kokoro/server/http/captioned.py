"""`POST /dev/captioned_speech`, as Kokoro-FastAPI answers it: the encoded audio as
base64 in JSON, with every word's start and end time.

Streamed (`stream`, the default), each block of audio is one JSON object on a line of
its own, `{"audio", "audio_format", "timestamps"}`, its timestamps the words said from
its start on; else one object holds the whole file and every word. Times are seconds
in the time line of the whole response (the lead silence, pauses and breaks counted).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from wyoming_kokoro.server.http.encoders import encoded, finished
from wyoming_kokoro.server.redact import for_client
from wyoming_kokoro.server.turns import SynthesisError
from wyoming_kokoro.server.wyoming.wire import write_or_abort
from wyoming_kokoro.timeline import WordTime

if TYPE_CHECKING:
    from aiohttp import web

    from wyoming_kokoro.server.http.encoders import Encoder
    from wyoming_kokoro.server.http.request import SpeechRequest

_LOGGER = logging.getLogger(__name__)

# A block of PCM and the written words said from its start on.
Timed = tuple[bytes, list[WordTime]]


def timestamps(words: list[WordTime]) -> list[dict[str, Any]]:
    """Kokoro-FastAPI's shape; a word not spoken, or not found, has null times."""
    return [{"word": w.word, "start_time": w.start, "end_time": w.end} for w in words]


async def send_captioned(
    request: web.Request,
    response: web.StreamResponse,
    encoder: Encoder,
    first: Timed,
    audio: AsyncIterator[Timed],
    timeout: float,
    speech: SpeechRequest,
) -> None:
    """The audio and its words as JSON: an object a line as they come, or one."""
    fmt = speech.response_format

    async def send(data: bytes, words: list[WordTime]) -> None:
        block = {"audio": base64.b64encode(data).decode(), "audio_format": fmt}
        line = json.dumps({**block, "timestamps": timestamps(words)}, ensure_ascii=False)
        await write_or_abort(response.write(line.encode() + b"\n"), request.transport, timeout)

    whole, said = bytearray(), []
    try:

        async def blocks() -> AsyncIterator[Timed]:
            yield first
            async for block in audio:
                yield block

        async for pcm, words in blocks():
            data = await encoded(encoder, pcm)
            if not speech.stream:
                whole += data
                said += words
            elif data or words:
                await send(data, words)
        tail = await finished(encoder)
        if speech.stream and tail:
            await send(tail, [])
        if not speech.stream:
            await send(bytes(whole + tail), said)
        await response.write_eof()
    except SynthesisError as err:
        _LOGGER.warning("Captioned speech failed mid-stream: %s", err)
        if speech.stream:  # a line can still say so
            with contextlib.suppress(ConnectionError):
                error = {"error": {"message": for_client(str(err))}}
                await write_or_abort(
                    response.write(json.dumps(error).encode() + b"\n"), request.transport, timeout
                )
                await response.write_eof()
                return
        if request.transport is not None:
            request.transport.abort()
    except ConnectionError as err:
        _LOGGER.debug("HTTP client went away: %s", err)
