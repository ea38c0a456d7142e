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

from wyoming_kokoro.server.redact import for_client
from wyoming_kokoro.server.scheduler import Scheduler
from wyoming_kokoro.server.turns import SynthesisError
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.fields import ssml_asked, text_of, voice_of
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
        # When it began to wait for a request with nothing under way (None: busy);
        # the oldest idle connection is closed when the table is full.
        self.idle_since: float | None = None
        self._draining = False  # the server stops: close once nothing is under way
        self._stopping = False  # the server stops now: cut the answer short
        self._closed_idle = False  # hung up on by us: what its read then says is moot

    async def _begin(self, voice: SynthesizeVoice | None, ssml: bool | None) -> Utterance:
        """A new utterance, its audio-start sent: the latest one, whose sender ends with us."""
        utterance = Utterance(self.config, self.scheduler, self.client_id, self.write, voice, ssml)
        await utterance.begin()
        self.utterance = utterance
        return utterance

    async def write(self, event: Event, timeout: float | None = None) -> None:
        # The sender task and the event loop both write: keep events whole.
        async with self._write_lock:
            await write_or_abort(
                async_write_event(event, self.writer),
                self.writer.transport,
                timeout or self.config.idle_seconds,
            )

    def close_idle(self, why: str) -> None:
        """Hang up on a connection that waits for its next request (`idle_since`)."""
        _LOGGER.info("Client %d idle: closing %s", self.client_id, why)
        self._closed_idle = True
        self.writer.close()  # its read ends, and with it `run`

    def drain(self) -> None:
        """The server stops: close now if idle, else once the answer under way is sent."""
        self._draining = True
        if self.idle_since is not None:
            self.close_idle("as the server stops")

    def stop(self, task: asyncio.Task[None]) -> None:
        """The server stops now: `task` (the one running `run`) ends the answer under
        way with an error event."""
        self._stopping = True
        task.cancel()

    async def run(self) -> None:
        """Read events until the client leaves, misbehaves or a request fails."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                if self._streaming is None:  # nothing under way
                    if self._draining:
                        break
                    self.idle_since = loop.time()
                try:
                    # shield: a timeout must not cancel a read that _wait started
                    event = await asyncio.wait_for(
                        asyncio.shield(self._read_ahead()), self.config.idle_seconds
                    )
                except asyncio.TimeoutError:
                    _LOGGER.debug("Client %d idle: closing", self.client_id)
                    break
                finally:
                    self.idle_since = None
                self._next_event = None
                if event is None or not await self.handle_event(event):
                    break
        except ProtocolError as err:
            if self._closed_idle:  # half an event was read when we hung up
                _LOGGER.debug("Client %d: %s", self.client_id, err)
            else:
                await self._fail(str(err), "bad-request")
        except SynthesisError as err:
            # The log has the whole error (the scheduler's); the client, no paths.
            _LOGGER.warning("Client %d: %s", self.client_id, err)
            await self._fail(str(err), "synthesis-failed", log=False)
        except (ConnectionError, asyncio.IncompleteReadError, BrokenPipeError) as err:
            _LOGGER.debug("Client %d went away: %s", self.client_id, err or type(err).__name__)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            _uncancel()
            # Home Assistant would take a bare close for the end of the audio.
            _LOGGER.info("Client %d: answer cut short, the server is stopping", self.client_id)
            await self._stop_sender()
            await self._fail("the server is shutting down", "shutting-down", log=False, timeout=1.0)
        except Exception:
            # A bug of ours: Home Assistant waits forever unless it gets an error and a close.
            _LOGGER.exception("Client %d: unexpected failure", self.client_id)
            await self._fail("internal server error", "internal-error", log=False)
        finally:
            await self._close()

    async def _fail(
        self, text: str, code: str, log: bool = True, timeout: float | None = None
    ) -> None:
        if log:
            _LOGGER.warning("Client %d: %s", self.client_id, text)
        text = for_client(text)  # the log has it whole
        if self._next_event is not None:
            self._next_event.cancel()  # linger_close reads the stream itself
        with contextlib.suppress(ConnectionError, RuntimeError, OSError):
            await self.write(Error(text=text, code=code).event(), timeout)
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
        await self._stop_sender()
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def _stop_sender(self) -> None:
        sender = self.utterance.sender if self.utterance else None
        if sender is not None and not sender.done():
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    async def handle_event(self, event: Event) -> bool:
        """Answer one event; False ends the connection."""
        if Describe.is_type(event.type):
            await self.write(await self.config.describe())
        elif Ping.is_type(event.type):
            await self.write(Pong(text=event.data.get("text")).event())
        elif SynthesizeStart.is_type(event.type):
            voice = voice_of(event)
            if self._streaming is not None:
                raise ProtocolError("synthesize-start while a stream is already open")
            # Text is on its way: a cold worker starts loading while the LLM writes it.
            self.scheduler.prepare()
            self._streaming = await self._begin(voice, ssml_asked(event))
        elif SynthesizeChunk.is_type(event.type):
            text = text_of(event)
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
            text, voice = text_of(event), voice_of(event)
            if self._streaming is not None:
                return True  # the streamed text again "for compatibility": already spoken
            if len(text) > self.config.max_text_chars:  # refused before any audio-start
                limit = self.config.max_text_chars
                raise ProtocolError(f"text is longer than the limit of {limit} characters")
            utterance = await self._begin(voice, ssml_asked(event))
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
            # Either may have failed already (a reset ends the read and the write
            # at once): its failure is this one, so it is retrieved, not logged.
            for task in (finishing, utterance.sender):
                if task is not None:
                    task.cancel()
                    task.add_done_callback(_retrieve)
            raise

    def _check_sender(self) -> None:
        # A stream whose audio already failed is answered now, not at its stop.
        sender = self._streaming.sender if self._streaming else None
        if sender is not None and sender.done() and sender.exception() is not None:
            raise sender.exception()  # type: ignore[misc]


def _uncancel() -> None:
    """The cancellation that stops a handler is handled: later timeouts of its task
    must not be taken for it (asyncio counts cancellations since Python 3.11)."""
    task = asyncio.current_task()
    if task is not None and hasattr(task, "uncancel"):
        task.uncancel()


def _retrieve(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()


def _hung_up(incoming: asyncio.Future[Event | None], eof_is_hang_up: bool) -> bool:
    """Did the read ahead end with the connection (a reset, or its end of input)?"""
    if not incoming.done() or incoming.cancelled():
        return False
    error = incoming.exception()
    if error is None:
        return eof_is_hang_up and incoming.result() is None
    return isinstance(error, (ConnectionError, asyncio.IncompleteReadError))
