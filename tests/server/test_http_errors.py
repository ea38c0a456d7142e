"""Every refusal of the HTTP API, over plain HTTP: status, OpenAI's error shape, CORS.

One server with a token, a CORS origin, a short text limit and one stream at a
time; others that cannot start their worker (503) or meet a lone surrogate.
"""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Iterator

import pytest
from support.http_client import http_base, http_server
from support.server_process import ServerProcess

KEY = "s3cret-token"
ORIGIN = "http://localhost:3000"
CALL = re.compile(r"Call for job \d+ of client (\d+)")


def request(
    base: str,
    method: str,
    path: str,
    body: bytes | dict | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    conn.request(method, path, body=data, headers=headers or {})
    reply = conn.getresponse()
    result = reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    conn.close()
    return result


def error_of(status: int, body: bytes) -> dict:
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"], error
    return error


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    args = ("--api-key", KEY, "--cors-origin", ORIGIN, "--max-text-chars", "300")
    with http_server(*args, "--max-connections", "1", "--debug") as running:
        yield running


def settled(server: ServerProcess) -> int:
    """Where this test's log lines begin: the server logs a refusal before it
    answers, but its log reaches the test on another thread, so an earlier test's
    line can arrive late. A refusal with a fresh name marks the end of those."""
    marker = f"settle-{time.monotonic_ns()}"
    code, _, _ = request(http_base(server), "GET", f"/static/{marker}")
    assert code == 404
    assert server.wait_for(lambda: any(marker in line for line in server.log), 5)
    return next(i for i, line in enumerate(server.log) if marker in line) + 1


def speak(server, body: bytes | dict, key: str | None = KEY, **headers: str):
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    return request(
        http_base(server),
        "POST",
        "/v1/audio/speech",
        body,
        {"Content-Type": "application/json", **auth, **headers},
    )


GOOD = {"model": "tts-1", "input": "Hello.", "voice": "jm_kumo", "response_format": "wav"}


@pytest.mark.parametrize(
    ("key", "status"), [(None, 401), ("wrong", 401), (KEY + "x", 401), (KEY, 200)]
)
def test_the_bearer_token_is_required(server, key, status) -> None:
    code, headers, body = speak(server, GOOD, key=key)
    assert code == status
    if status == 401:
        assert error_of(code, body)["type"] == "authentication_error"
        assert headers["www-authenticate"] == "Bearer"
    else:
        assert body[:4] == b"RIFF" and len(body) > 10_000


def test_health_and_page_need_no_token_but_the_api_does(server) -> None:
    base = http_base(server)
    assert request(base, "GET", "/health")[0] == 200
    assert request(base, "GET", "/")[0] == 200
    assert request(base, "GET", "/v1/audio/voices")[0] == 401
    assert request(base, "GET", "/v1/models", headers={"Authorization": f"Bearer {KEY}"})[0] == 200


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        (b"{not json", 400, None),
        (b"[1, 2]", 400, None),
        ({"model": "tts-1", "voice": "jm_kumo"}, 400, "input"),
        ({**GOOD, "input": 5}, 400, "input"),
        ({**GOOD, "input": "   "}, 400, "input"),
        ({**GOOD, "voice": "af_nobody"}, 400, "voice"),
        ({**GOOD, "voice": "jm_kumo(2)+"}, 400, "voice"),
        ({**GOOD, "speed": 5}, 400, "speed"),
        ({**GOOD, "speed": "fast"}, 400, "speed"),
        ({**GOOD, "response_format": "ogg"}, 400, "response_format"),
        ({**GOOD, "lang_code": "klingon"}, 400, "lang_code"),
        ({**GOOD, "stream_format": "chunks"}, 400, "stream_format"),
        ({**GOOD, "model": "whisper-1"}, 404, "model"),
        ({**GOOD, "input": "x" * 301}, 413, "input"),
        ({**GOOD, "input": "** 🙂 **"}, 422, "input"),
    ],
)
def test_bad_requests_get_openai_errors(server, body, status, param) -> None:
    code, headers, reply = speak(server, body)
    assert code == status, reply
    assert headers["content-type"].startswith("application/json")
    error = error_of(code, reply)
    assert error["param"] == param
    assert error["type"] == "invalid_request_error" if status != 404 else "not_found_error"


MALFORMED = {
    "nested 7,000 deep": b"[" * 7000,
    "an object nested 1,500 deep": b'{"a":' * 1500,
    "a 5,000-digit speed": b'{"input": "Hi.", "speed": ' + b"9" * 5000 + b"}",
    "a number lang_code": {**GOOD, "lang_code": 5},
    "a list language": {**GOOD, "language": ["en"]},
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_json_is_a_400_with_one_log_line(server, body) -> None:
    """Valid JSON (or nearly) that the checks missed: a 500 and a traceback before."""
    start = settled(server)
    code, headers, reply = speak(server, body)
    assert code == 400, reply
    assert headers["content-type"].startswith("application/json")
    assert error_of(code, reply)["type"] == "invalid_request_error"
    assert server.wait_for(lambda: any(": 400 " in line for line in server.log[start:]), 5)
    added = server.log[start:]
    assert not any("Traceback" in line for line in added), "".join(added)
    assert len([line for line in added if "/v1/audio/speech" in line]) == 1, "".join(added)


def test_a_lone_surrogate_is_a_400_and_the_server_keeps_speaking() -> None:
    """JSON may escape half a surrogate pair; no UTF-8 encodes it. It reached the
    pipe to the worker and stopped the scheduler: no client got audio again."""
    with http_server("--max-text-chars", "300") as own:
        base = http_base(own)
        headers = {"Content-Type": "application/json"}
        for text in (rb"Hello \ud800 there.", rb"\udc00"):
            body = b'{"input": "' + text + b'", "response_format": "wav"}'
            code, _, reply = request(base, "POST", "/v1/audio/speech", body, headers)
            assert code == 400 and error_of(code, reply)["param"] == "input"
        code, _, audio = request(base, "POST", "/v1/audio/speech", GOOD, headers)
        assert code == 200 and audio[:4] == b"RIFF" and len(audio) > 10_000


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",  # what a form or fetch() may send cross-origin without a preflight
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=klingon",  # was a 500 (unknown codec)
        "application/json; charset=utf-16",
    ],
)
def test_a_body_that_is_not_declared_json_is_a_415(server, content_type) -> None:
    """Any web page could make the server speak: a 'simple' cross-origin POST needs
    no preflight, so CORS never asked."""
    headers = {"Authorization": f"Bearer {KEY}"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    code, _, reply = request(
        http_base(server), "POST", "/v1/audio/speech", json.dumps(GOOD).encode(), headers
    )
    assert code == 415, reply
    assert error_of(code, reply)["code"] == "unsupported_media_type"


@pytest.mark.parametrize("content_type", ["application/json; charset=UTF-8", "Application/JSON"])
def test_json_with_parameters_or_other_case_is_json(server, content_type) -> None:
    code, _, reply = speak(server, {**GOOD, "input": 5}, **{"Content-Type": content_type})
    assert code == 400 and error_of(code, reply)["param"] == "input"


def test_the_preflight_allows_the_headers_the_client_asks_for(server) -> None:
    """OpenAI's JavaScript client sends x-stainless-* headers: its preflight failed."""
    asked = "authorization, content-type, x-stainless-os, x-stainless-retry-count"
    preflight = {
        "Origin": ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": asked,
    }
    code, headers, _ = request(http_base(server), "OPTIONS", "/v1/audio/speech", headers=preflight)
    assert code == 204
    allowed = {h.strip().lower() for h in headers["access-control-allow-headers"].split(",")}
    assert allowed >= {h.strip() for h in asked.split(",")}
    assert "access-control-request-headers" in headers["vary"].lower()


def test_a_model_that_cannot_load_is_a_503_that_names_no_path(tmp_path) -> None:
    """The client is told why, the log keeps where: a body named the server's files."""
    model = tmp_path / "private-dir" / "kokoro.onnx"
    model.parent.mkdir()
    model.write_bytes(b"not a model" * 100)
    with http_server("--model", str(model)) as broken:
        code, _, body = request(
            http_base(broken),
            "POST",
            "/v1/audio/speech",
            GOOD,
            {"Content-Type": "application/json"},
        )
        log = "".join(broken.log)
    message = error_of(code, body)["message"]
    assert code == 503 and "could not be loaded" in message, message
    assert "private-dir" not in message and str(tmp_path) not in message, message
    assert str(model) in log  # the operator still sees it


def test_an_unproducible_format_names_those_that_work(server) -> None:
    _, _, reply = speak(server, {**GOOD, "response_format": "m4a"})
    message = error_of(400, reply)["message"]
    for fmt in ("mp3", "opus", "aac", "flac", "wav", "pcm"):
        assert fmt in message


def test_a_body_over_the_limit_is_413_and_unknown_paths_404(server) -> None:
    code, _, reply = speak(server, b'{"input": "' + b"a" * 20_000 + b'"}')
    assert code == 413 and error_of(code, reply)["code"] == "body_too_large"
    auth = {"Authorization": f"Bearer {KEY}"}
    code, _, reply = request(http_base(server), "GET", "/v1/nothing", headers=auth)
    assert code == 404 and error_of(code, reply)["type"] == "not_found_error"
    code, _, reply = request(http_base(server), "GET", "/v1/audio/speech", headers=auth)
    assert code == 405 and error_of(code, reply)


def test_cors_only_for_the_configured_origin(server) -> None:
    base = http_base(server)
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    code, headers, _ = request(base, "OPTIONS", "/v1/audio/speech", headers=preflight)
    assert code == 204
    assert headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in headers["access-control-allow-headers"].lower()
    _, headers, _ = speak(server, GOOD, Origin=ORIGIN)
    assert headers["access-control-allow-origin"] == ORIGIN
    _, headers, _ = speak(server, GOOD, Origin="http://evil.example")
    assert "access-control-allow-origin" not in headers


def test_cors_is_off_unless_configured() -> None:
    with http_server() as plain:
        preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
        code, headers, _ = request(
            http_base(plain), "OPTIONS", "/v1/audio/speech", headers=preflight
        )
        assert "access-control-allow-origin" not in headers and code in (403, 404, 405)


def test_a_second_stream_beyond_the_limit_is_503_and_a_leaver_frees_its_queue(server) -> None:
    story = " ".join(f"Sentence number {n} of a long story about the garden." for n in range(30))
    host, port = http_base(server).removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    conn.request(
        "POST",
        "/v1/audio/speech",
        json.dumps({**GOOD, "input": story[:300], "response_format": "pcm"}),
        {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    reply = conn.getresponse()
    assert reply.status == 200 and reply.read(4800)  # the first audio is here
    code, _, body = speak(server, GOOD)
    assert code == 503 and error_of(code, body)["code"] == "busy"
    conn.close()  # hang up mid-stream
    time.sleep(1.5)  # the call in flight ends
    calls = len([line for line in server.log if CALL.search(line)])
    time.sleep(3)
    # No further model call for the client who left: its pieces were dropped.
    assert len([line for line in server.log if CALL.search(line)]) == calls
    assert speak(server, GOOD)[0] == 200  # and the stream slot is free again


def test_a_worker_that_cannot_start_is_503() -> None:
    with http_server("--min-free-mb", "100000000") as starved:
        code, _, body = request(
            http_base(starved),
            "POST",
            "/v1/audio/speech",
            GOOD,
            {"Content-Type": "application/json"},
        )
    error = error_of(code, body)
    assert code == 503 and error["type"] == "server_error" and "memory" in error["message"]


def test_an_undecodable_authorization_header_is_a_401_not_a_crash(server) -> None:
    host, port = http_base(server).removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.putrequest("GET", "/v1/models")
    conn.putheader("Authorization", b"Bearer \xff\xfe")
    conn.endheaders()
    reply = conn.getresponse()
    assert reply.status == 401
    assert error_of(reply.status, reply.read())["type"] == "authentication_error"
    conn.close()


@pytest.mark.parametrize("voice", ["absent", None], ids=["absent", "null"])
def test_without_a_voice_the_default_voice_speaks(server, voice) -> None:
    """A null voice is no voice, as OpenAI treats null optional fields."""
    body = {key: value for key, value in GOOD.items() if key != "voice"}
    if voice is None:
        body["voice"] = None
    code, headers, audio = speak(server, body)
    assert headers["x-kokoro-voice"] == "jm_kumo"  # the server's default here
    assert code == 200 and audio[:4] == b"RIFF" and len(audio) > 10_000


RACE = """
import os, sys, threading, time
from wyoming_kokoro.server.http.encoders import make_encoder
pcm = os.urandom(24000 * 2 * 2)
for fmt in ("flac", "opus", "mp3", "aac"):
    for trial in range(12):
        encoder = make_encoder(fmt)
        def work():
            for _ in range(3):
                encoder.encode(pcm)
            encoder.finish()
        thread = threading.Thread(target=work)
        thread.start()
        time.sleep(0.002 * (trial % 6))
        encoder.close()  # what a client's hang-up does while a thread encodes
        thread.join()
print("survived")
"""


def test_closing_an_encoder_while_a_thread_encodes_is_safe() -> None:
    """A hang-up closes the encoder while asyncio.to_thread may still be encoding:
    FFmpeg freed its state under the thread and the whole server crashed (SIGSEGV)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", RACE], capture_output=True, text=True, timeout=240, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "survived" in result.stdout
