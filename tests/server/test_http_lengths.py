"""A whole answer (`"stream": false`) declares its true length; a stream says
"to the end". Checked on the encoders' bytes (fast) and on a real server's answers."""

from __future__ import annotations

import base64
import io
import json
import struct
import urllib.request
import wave
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.http_client import decode, http_base, http_server
from support.server_process import ServerProcess

from wyoming_kokoro.server.http.encoders import make_encoder

# Blocks of s16le samples as the worker hands them over, some empty.
_BLOCKS = st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=5).map(
    lambda sizes: [bytes(range(256)) * (2 * n // 256) + bytes(2 * n % 256) for n in sizes]
)


def encode(fmt: str, blocks: list[bytes], streamed: bool) -> bytes:
    encoder = make_encoder(fmt, streamed)
    try:
        return b"".join(encoder.encode(block) for block in blocks) + encoder.finish()
    finally:
        encoder.close()


def wav_sizes(data: bytes) -> tuple[int, int, int]:
    """(RIFF size, declared frames, frames actually there)."""
    riff = struct.unpack_from("<I", data, 4)[0]
    with wave.open(io.BytesIO(data)) as reader:
        declared = reader.getnframes()
    return riff, declared, (len(data) - 44) // 2


def flac_total_samples(data: bytes) -> int:
    """STREAMINFO's 36-bit sample count (0: unknown): "fLaC", a 4-byte block header,
    then 10 bytes of block sizes and frame sizes, and 20 bits of rate, 3 of channels,
    5 of bits per sample before it."""
    assert data[:4] == b"fLaC" and data[4] & 0x7F == 0  # STREAMINFO comes first
    packed = int.from_bytes(data[8 + 10 : 8 + 18], "big")
    return packed & (2**36 - 1)


@settings(max_examples=25, deadline=None)
@given(blocks=_BLOCKS)
def test_a_whole_wav_declares_its_length_and_a_stream_reads_to_the_end(
    blocks: list[bytes],
) -> None:
    samples = sum(len(block) for block in blocks) // 2
    whole = encode("wav", blocks, streamed=False)
    assert wav_sizes(whole) == (len(whole) - 8, samples, samples)
    streamed = encode("wav", blocks, streamed=True)
    assert streamed[44:] == whole[44:]
    assert struct.unpack_from("<I", streamed, 4)[0] == 0xFFFFFFFF
    assert struct.unpack_from("<I", streamed, 40)[0] == 0xFFFFFFFF


@settings(max_examples=10, deadline=None)
@given(blocks=_BLOCKS)
def test_a_whole_flac_declares_its_sample_count_and_a_stream_leaves_it_unknown(
    blocks: list[bytes],
) -> None:
    samples = sum(len(block) for block in blocks) // 2
    whole = encode("flac", blocks, streamed=False)
    assert flac_total_samples(whole) == samples
    if samples:
        assert len(decode(whole, "flac")) == samples
    # Streamed, the header leaves before the count is known; unless the audio is
    # shorter than one FLAC frame, which is written (header first) at the end.
    assert flac_total_samples(encode("flac", blocks, streamed=True)) in (0, samples)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with http_server("--idle-timeout", "120") as running:
        yield running


def post(server: ServerProcess, path: str, body: dict[str, object]) -> bytes:
    request = urllib.request.Request(
        http_base(server) + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        return reply.read()


TEXT = "The garage door is closed. The lights are off."


def test_a_server_sends_a_whole_answer_with_its_true_length(server) -> None:
    body = {"input": TEXT, "voice": "jm_kumo", "stream": False}
    whole = post(server, "/v1/audio/speech", {**body, "response_format": "wav"})
    riff, declared, frames = wav_sizes(whole)
    assert frames > 24_000 and (riff, declared) == (len(whole) - 8, frames)

    flac = post(server, "/v1/audio/speech", {**body, "response_format": "flac"})
    assert flac_total_samples(flac) == len(decode(flac, "flac")) > 24_000

    # The captioned answer's file too.
    captioned = json.loads(
        post(server, "/dev/captioned_speech", {**body, "response_format": "wav"})
    )
    audio = base64.b64decode(captioned["audio"])
    riff, declared, frames = wav_sizes(audio)
    assert frames > 24_000 and (riff, declared) == (len(audio) - 8, frames)


def test_a_stream_says_read_to_the_end(server) -> None:
    streamed = post(
        server, "/v1/audio/speech", {"input": TEXT, "voice": "jm_kumo", "response_format": "wav"}
    )
    assert struct.unpack_from("<I", streamed, 4)[0] == 0xFFFFFFFF
    assert struct.unpack_from("<I", streamed, 40)[0] == 0xFFFFFFFF
    assert len(streamed) > 44 + 2 * 24_000
