"""PCM (s16le, 24 kHz, mono) → the response formats, piece by piece, for streaming.

`pcm` and `wav` need no library: raw samples, or the same after a WAV header
whose sizes say "unknown" (a stream's length is not known when it starts). A
whole answer (`"stream": false`) is sent at the end, its header with the true
sizes (WAV's, FLAC's sample count): clients that trust a header then can.
The compressed formats use PyAV — FFmpeg's encoders (LAME for MP3, libopus,
FFmpeg's AAC and FLAC) in one maintained binary wheel that also writes their
streamable containers (MP3, Ogg, ADTS, FLAC) to memory as it goes. PyAV is
imported only when such a format is asked for: the idle server stays small.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import struct
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from wyoming_kokoro.audio import CHANNELS, SAMPLE_RATE, SAMPLE_WIDTH

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Format:
    """One `response_format`: its media type and, if compressed, how FFmpeg writes it."""

    content_type: str
    container: str | None = None  # FFmpeg muxer; None: no library needed
    codec: str | None = None
    bit_rate: int | None = None
    options: tuple[tuple[str, str], ...] = ()


FORMATS: dict[str, Format] = {
    "mp3": Format("audio/mpeg", "mp3", "libmp3lame", 64_000, (("write_xing", "0"),)),
    # Ogg pages every 0.1 s: the muxer would otherwise hold a second of audio back.
    "opus": Format("audio/ogg", "ogg", "libopus", 32_000, (("page_duration", "100000"),)),
    "aac": Format("audio/aac", "adts", "aac", 64_000),
    "flac": Format("audio/flac", "flac", "flac"),
    "wav": Format("audio/wav"),
    "pcm": Format("audio/pcm"),
}


class UnsupportedFormat(ValueError):
    """A format this installation cannot produce; the message names those it can."""


class Encoder(Protocol):
    blocking: bool  # True: run encode/finish in a thread, off the event loop

    def encode(self, pcm: bytes) -> bytes: ...

    def finish(self) -> bytes: ...

    def close(self) -> None: ...


async def encoded(encoder: Encoder, pcm: bytes) -> bytes:
    """`encoder.encode(pcm)`; FFmpeg's encoders hold the GIL little but take time, so
    a blocking one runs in a thread and the event loop stays free."""
    return await asyncio.to_thread(encoder.encode, pcm) if encoder.blocking else encoder.encode(pcm)


async def finished(encoder: Encoder) -> bytes:
    """`encoder.finish()`, off the event loop if it blocks."""
    return await asyncio.to_thread(encoder.finish) if encoder.blocking else encoder.finish()


class RawEncoder:
    """`pcm`: the samples as they are; `wav`: the same after a streaming WAV header."""

    blocking = False

    def __init__(self, header: bytes = b"") -> None:
        self._header = header

    def encode(self, pcm: bytes) -> bytes:
        out, self._header = self._header + pcm, b""
        return out

    def finish(self) -> bytes:
        return self.encode(b"")

    def close(self) -> None:
        pass


class WholeWavEncoder:
    """`wav` sent whole: the samples are kept and come at the end after a header
    that has their true size."""

    blocking = False

    def __init__(self) -> None:
        self._data = bytearray()

    def encode(self, pcm: bytes) -> bytes:
        self._data += pcm
        return b""

    def finish(self) -> bytes:
        out = wav_header(len(self._data)) + bytes(self._data)
        self._data.clear()
        return out

    def close(self) -> None:
        self._data.clear()


_UNKNOWN = 0xFFFFFFFF


def wav_header(data_bytes: int | None = None) -> bytes:
    """A 44-byte WAV header; without a size, the sizes at their maximum: "read to the end"."""
    data_size = _UNKNOWN if data_bytes is None else min(data_bytes, _UNKNOWN - 36)
    riff_size = _UNKNOWN if data_bytes is None else data_size + 36
    byte_rate = SAMPLE_RATE * SAMPLE_WIDTH * CHANNELS
    return (
        b"RIFF"
        + struct.pack("<I", riff_size)
        + b"WAVEfmt "
        + struct.pack(
            "<IHHIIHH", 16, 1, CHANNELS, SAMPLE_RATE, byte_rate, SAMPLE_WIDTH * CHANNELS, 16
        )
        + b"data"
        + struct.pack("<I", data_size)
    )


class _Sink(io.RawIOBase):
    """A write-only, unseekable file: FFmpeg's muxers then write strictly in order."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


class _Whole(io.BytesIO):
    """A seekable file, read once finished: a muxer then goes back to write what it
    learns at the end (FLAC's sample count)."""

    def take(self) -> bytes:
        return b""


class AvEncoder:
    """An FFmpeg encoder and muxer writing to memory; each call returns the new bytes
    (`streamed`), or all of them at finish."""

    blocking = True

    def __init__(self, fmt: Format, streamed: bool = True) -> None:
        import av

        assert fmt.container is not None and fmt.codec is not None
        self._av = av
        self._sink: _Sink | _Whole = _Sink() if streamed else _Whole()
        self._container = av.open(
            self._sink, mode="w", format=fmt.container, options=dict(fmt.options)
        )
        # Any: PyAV types a stream as audio, video or subtitles; this one is audio.
        self._stream: Any = self._container.add_stream(fmt.codec, rate=SAMPLE_RATE)
        context: Any = self._stream.codec_context
        context.layout = "mono"
        if fmt.bit_rate:
            context.bit_rate = fmt.bit_rate
        self._closed = False
        # Encoding runs in a worker thread that a client's hang-up does not stop:
        # closing the container under it crashed the process (FFmpeg frees its state).
        self._lock = threading.Lock()

    def encode(self, pcm: bytes) -> bytes:
        samples = len(pcm) // SAMPLE_WIDTH
        with self._lock:
            if samples and not self._closed:
                frame = self._av.AudioFrame(format="s16", layout="mono", samples=samples)
                frame.planes[0].update(pcm[: samples * SAMPLE_WIDTH])
                frame.sample_rate = SAMPLE_RATE
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
            return self._sink.take()

    def finish(self) -> bytes:
        with self._lock:
            if not self._closed:
                self._closed = True
                for packet in self._stream.encode(None):
                    self._container.mux(packet)
                self._container.close()
                if isinstance(self._sink, _Whole):
                    return self._sink.getvalue()
            return self._sink.take()

    def close(self) -> None:
        """Free FFmpeg's state of an abandoned stream (after any encode in progress)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                try:
                    self._container.close()
                except Exception as err:  # an unfinished stream may fail to close cleanly
                    _LOGGER.debug("Closing an abandoned encoder: %s", err)


@functools.cache
def producible() -> tuple[str, ...]:
    """The formats this installation can write (PyAV's codecs are looked up once)."""
    names = [name for name, fmt in FORMATS.items() if fmt.codec is None]
    try:
        import av
    except ImportError:
        _LOGGER.warning("PyAV is not installed: only %s can be produced", ", ".join(names))
        return tuple(names)
    for name, fmt in FORMATS.items():
        if fmt.codec is None:
            continue
        try:
            av.codec.Codec(fmt.codec, "w")
        except Exception:  # this FFmpeg build lacks the encoder
            _LOGGER.warning("FFmpeg here has no %s encoder: %s is unavailable", fmt.codec, name)
            continue
        names.append(name)
    return tuple(sorted(names, key=list(FORMATS).index))


def make_encoder(name: str, streamed: bool = True) -> Encoder:
    """An encoder for `name`, streaming or (not `streamed`) giving the whole file at
    finish; raises UnsupportedFormat naming the formats that work."""
    fmt = FORMATS.get(name)
    if fmt is None or (fmt.codec is not None and name not in producible()):
        raise UnsupportedFormat(
            f"response_format {name!r} cannot be produced here; "
            f"use one of: {', '.join(producible())}"
        )
    if name == "wav":
        return RawEncoder(wav_header()) if streamed else WholeWavEncoder()
    if fmt.codec is None:
        return RawEncoder()
    return AvEncoder(fmt, streamed)
