"""Wyoming events ↔ scheduler, one handler per connection.

An *utterance* is what the client hears between one audio-start and its
audio-stop: the text of one `synthesize`, or of a whole streaming session
(synthesize-start, chunks, synthesize-stop). Its pieces are queued as soon as the
text shows them complete and are sent back in order by a sender task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from wyoming_kokoro.server.redact import without_paths
from wyoming_kokoro.server.scheduler import Scheduler
from wyoming_kokoro.server.turns import SynthesisError
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.speech import Utterance
from wyoming_kokoro.server.wyoming.wire import (
    ProtocolError,
    linger_close,
    read_event,
    write_or_abort,
)

_LOGGER = logging.getLogger(__name__)


class KokoroHandler:
    """Speaks the Wyoming TTS protocol on one connection."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        config: HandlerConfig,
        scheduler: Scheduler,
        client_id: int,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.config = config
        self.scheduler = scheduler
        self.client_id = client_id
        self._write_lock = asyncio.Lock()
        self._streaming: Utterance | None = None
        self.utterance: Utterance | None = None  # the latest one begun: its sender ends with us
        # The next event, read ahead while an utterance is spoken so a client that
        # leaves is noticed at once, not at the next failed write.
        self._next_event: asyncio.Future[Event | None] | None = None

    async def _begin(self, voice: SynthesizeVoice | None, ssml: bool | None) -> Utterance:
        """A new utterance, its audio-start sent: the latest one, whose sender ends with us."""
        utterance = Utterance(self.config, self.scheduler, self.client_id, self.write, voice, ssml)
        await utterance.begin()
        self.utterance = utterance
        return utterance

    async def write(self, event: Event) -> None:
        # The sender task and the event loop both write: keep events whole.
        async with self._write_lock:
            await write_or_abort(
                async_write_event(event, self.writer),
                self.writer.transport,
                self.config.idle_seconds,
            )

    async def run(self) -> None:
        """Read events until the client leaves, misbehaves or a request fails."""
        try:
            while True:
                try:
                    # shield: a timeout must not cancel a read that _wait started
                    event = await asyncio.wait_for(
                        asyncio.shield(self._read_ahead()), self.config.idle_seconds
                    )
                except asyncio.TimeoutError:
                    _LOGGER.debug("Client %d idle: closing", self.client_id)
                    break
                self._next_event = None
                if event is None or not await self.handle_event(event):
                    break
        except ProtocolError as err:
            await self._fail(str(err), "bad-request")
        except SynthesisError as err:
            # The log has the whole error (the scheduler's); the client, no paths.
            _LOGGER.warning("Client %d: %s", self.client_id, err)
            await self._fail(without_paths(str(err)), "synthesis-failed", log=False)
        except (ConnectionError, asyncio.IncompleteReadError, BrokenPipeError) as err:
            _LOGGER.debug("Client %d went away: %s", self.client_id, err or type(err).__name__)
        except Exception:
            # A bug of ours: Home Assistant waits forever unless it gets an error and a close.
            _LOGGER.exception("Client %d: unexpected failure", self.client_id)
            await self._fail("internal server error", "internal-error", log=False)
        finally:
            await self._close()

    async def _fail(self, text: str, code: str, log: bool = True) -> None:
        if log:
            _LOGGER.warning("Client %d: %s", self.client_id, text)
        if self._next_event is not None:
            self._next_event.cancel()  # linger_close reads the stream itself
        with contextlib.suppress(ConnectionError, RuntimeError, OSError):
            await self.write(Error(text=text, code=code).event())
            await linger_close(self.reader, self.writer)

    def _read_ahead(self) -> asyncio.Future[Event | None]:
        if self._next_event is None:
            self._next_event = asyncio.ensure_future(read_event(self.reader, self.config.limits))
        return self._next_event

    async def _close(self) -> None:
        if self._next_event is not None:
            self._next_event.cancel()
        if self._streaming is not None:
            self._streaming.close()  # an opening phrase due later is for nobody now
        self.scheduler.cancel(self.client_id)
        sender = self.utterance.sender if self.utterance else None
        if sender is not None and not sender.done():
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def handle_event(self, event: Event) -> bool:
        """Answer one event; False ends the connection."""
        if Describe.is_type(event.type):
            await self.write(await self.config.describe())
        elif Ping.is_type(event.type):
            await self.write(Pong(text=event.data.get("text")).event())
        elif SynthesizeStart.is_type(event.type):
            voice = _voice_of(event)
            if self._streaming is not None:
                raise ProtocolError("synthesize-start while a stream is already open")
            # Text is on its way: a cold worker starts loading while the LLM writes it.
            self.scheduler.prepare()
            self._streaming = await self._begin(voice, _ssml_asked(event))
        elif SynthesizeChunk.is_type(event.type):
            text = _text_of(event)
            if self._streaming is None:
                raise ProtocolError("synthesize-chunk without synthesize-start")
            self._check_sender()
            await self._streaming.add_text(text)
        elif SynthesizeStop.is_type(event.type):
            if self._streaming is None:
                raise ProtocolError("synthesize-stop without synthesize-start")
            utterance, self._streaming = self._streaming, None
            await self._wait(utterance)
            await self.write(SynthesizeStopped().event())
        elif Synthesize.is_type(event.type):
            text, voice = _text_of(event), _voice_of(event)
            if self._streaming is not None:
                return True  # the streamed text again "for compatibility": already spoken
            if len(text) > self.config.max_text_chars:  # refused before any audio-start
                limit = self.config.max_text_chars
                raise ProtocolError(f"text is longer than the limit of {limit} characters")
            utterance = await self._begin(voice, _ssml_asked(event))
            await utterance.add_text(text, more=False)  # the whole text
            await self._wait(utterance)
        else:
            _LOGGER.debug("Ignoring event %s", event.type)
        return True

    async def _wait(self, utterance: Utterance) -> None:
        """Until the utterance has been sent; stops it if the client hangs up meanwhile.

        Wyoming clients (Home Assistant's included) keep the connection open until
        audio-stop, so its end now means nobody is listening: the model is freed at
        once instead of after the next failed write. (A client that half-closes its
        socket after the request is not served to the end; stdio:// is.)
        """
        finishing = asyncio.ensure_future(utterance.finish())
        try:
            incoming = self._read_ahead()
            await asyncio.wait((finishing, incoming), return_when=asyncio.FIRST_COMPLETED)
            if not finishing.done() and _hung_up(incoming, self.config.eof_is_hang_up):
                raise ConnectionError("the client hung up during its utterance")
            await finishing  # an event that came meanwhile is handled after it
        except BaseException:
            finishing.cancel()
            if utterance.sender is not None:
                utterance.sender.cancel()
            raise

    def _check_sender(self) -> None:
        # A stream whose audio already failed is answered now, not at its stop.
        sender = self._streaming.sender if self._streaming else None
        if sender is not None and sender.done() and sender.exception() is not None:
            raise sender.exception()  # type: ignore[misc]


def _hung_up(incoming: asyncio.Future[Event | None], eof_is_hang_up: bool) -> bool:
    """Did the read ahead end with the connection (a reset, or its end of input)?"""
    if not incoming.done() or incoming.cancelled():
        return False
    error = incoming.exception()
    if error is None:
        return eof_is_hang_up and incoming.result() is None
    return isinstance(error, (ConnectionError, asyncio.IncompleteReadError))


def _ssml_asked(event: Event) -> bool | None:
    """True for text_format "ssml"; None (decide from the text) otherwise."""
    text_format = event.data.get("text_format")
    if text_format is not None and not isinstance(text_format, str):
        raise ProtocolError("'text_format' must be a string")
    if text_format not in (None, "text", "ssml"):
        raise ProtocolError(f"text_format {text_format!r}: use text or ssml")
    return True if text_format == "ssml" else None


def _text_of(event: Event) -> str:
    text = event.data.get("text")
    if not isinstance(text, str):
        raise ProtocolError(f"{event.type} needs a 'text' string")
    try:
        text.encode("utf-8")  # a lone surrogate is valid JSON, and stopped the worker pipe
    except UnicodeEncodeError as err:
        raise ProtocolError(f"{event.type} text is not valid Unicode") from err
    return text


def _voice_of(event: Event) -> SynthesizeVoice | None:
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
