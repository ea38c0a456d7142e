"""Tests for wyoming_kokoro.catalog.download against a real local HTTP server (no internet)."""

from __future__ import annotations

import errno
import hashlib
import io
import random
import shlex
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.privileges import can_mount_privately

from wyoming_kokoro.catalog import download
from wyoming_kokoro.catalog.download import (
    ConsoleProgress,
    DownloadError,
    FileCheckError,
    download_file,
    download_model,
    verify_file,
)
from wyoming_kokoro.catalog.files import KnownFile


def _known(name: str, data: bytes) -> KnownFile:
    return KnownFile(name, len(data), hashlib.sha256(data).hexdigest())


MODEL_DATA = random.Random(1).randbytes(200_000)
VOICES_DATA = random.Random(2).randbytes(50_000)
MODEL = _known("model.onnx", MODEL_DATA)
VOICES = _known("voices.bin", VOICES_DATA)


@dataclass
class ServerState:
    """What the test server serves, and what it has seen."""

    files: dict[str, bytes]
    # good | truncated | corrupt | cut (close mid-body) | norange | refuse416 | missing
    mode: str = "good"
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""

    def url_for(self, known: KnownFile) -> str:
        return f"{self.url}/{known.name}"

    @property
    def ranges(self) -> list[str]:
        return [r for _, r in self.requests if r]


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            rng = self.headers.get("Range")
            state.requests.append((self.path, rng))
            data = state.files.get(self.path.lstrip("/"))
            if data is None or state.mode == "missing":
                self.send_error(404)
                return
            if rng and state.mode == "refuse416":
                self.send_error(416)
                return
            if state.mode == "truncated":
                data = data[: len(data) // 2]
            elif state.mode == "corrupt":
                data = data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:]
            start = 0
            if rng and state.mode != "norange":
                start = int(rng.removeprefix("bytes=").split("-")[0])
            body = data[start:]
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if state.mode == "cut":
                # Promise the full body, send part of it, then hang up.
                self.wfile.write(body[: len(body) // 3])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


@pytest.fixture
def server() -> Iterator[ServerState]:
    state = ServerState(files={MODEL.name: MODEL_DATA, VOICES.name: VOICES_DATA})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # A short poll interval keeps shutdown (and so each test) fast.
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _part(dest: Path) -> Path:
    return dest.with_name(dest.name + ".part")


def test_good_download(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / "models" / MODEL.name  # the directory does not exist yet
    assert download_file(server.url_for(MODEL), dest, MODEL) == dest
    assert dest.read_bytes() == MODEL_DATA
    assert not _part(dest).exists()
    verify_file(dest, MODEL)


def test_present_file_makes_no_request(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / MODEL.name
    dest.write_bytes(MODEL_DATA)
    assert download_file(server.url_for(MODEL), dest, MODEL) == dest
    assert server.requests == []


def test_bad_present_file_is_replaced(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / MODEL.name
    dest.write_bytes(b"not a model")
    download_file(server.url_for(MODEL), dest, MODEL)
    assert dest.read_bytes() == MODEL_DATA


def test_truncated(server: ServerState, tmp_path: Path) -> None:
    server.mode = "truncated"
    dest = tmp_path / MODEL.name
    with pytest.raises(DownloadError, match=r"expected 200000 bytes, got 100000 \(truncated"):
        download_file(server.url_for(MODEL), dest, MODEL)
    assert not dest.exists()
    assert not _part(dest).exists()


def test_corrupted(server: ServerState, tmp_path: Path) -> None:
    server.mode = "corrupt"
    dest = tmp_path / MODEL.name
    with pytest.raises(DownloadError, match=r"sha256 mismatch.*partial file was removed"):
        download_file(server.url_for(MODEL), dest, MODEL)
    assert not dest.exists()
    assert not _part(dest).exists()


def test_interrupted_then_resumed(server: ServerState, tmp_path: Path) -> None:
    server.mode = "cut"
    dest = tmp_path / MODEL.name
    with pytest.raises(DownloadError, match=r"interrupted.*run again to resume"):
        download_file(server.url_for(MODEL), dest, MODEL)
    assert not dest.exists()
    kept = _part(dest).stat().st_size
    assert 0 < kept < MODEL.size

    server.mode = "good"
    download_file(server.url_for(MODEL), dest, MODEL)
    assert dest.read_bytes() == MODEL_DATA
    assert server.ranges == [f"bytes={kept}-"]
    assert not _part(dest).exists()


def test_server_ignores_range(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / MODEL.name
    _part(dest).write_bytes(MODEL_DATA[:5000])
    server.mode = "norange"
    download_file(server.url_for(MODEL), dest, MODEL)
    assert server.ranges == ["bytes=5000-"]  # asked, got 200, restarted from zero
    assert dest.read_bytes() == MODEL_DATA


def test_range_not_satisfiable_restarts(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / MODEL.name
    _part(dest).write_bytes(b"stale partial file")
    server.mode = "refuse416"
    download_file(server.url_for(MODEL), dest, MODEL)
    assert [r for _, r in server.requests] == ["bytes=18-", None]
    assert dest.read_bytes() == MODEL_DATA


def test_oversized_part_restarts(server: ServerState, tmp_path: Path) -> None:
    dest = tmp_path / MODEL.name
    _part(dest).write_bytes(MODEL_DATA + b"junk")
    download_file(server.url_for(MODEL), dest, MODEL)
    assert server.ranges == []
    assert dest.read_bytes() == MODEL_DATA


def test_http_error(server: ServerState, tmp_path: Path) -> None:
    server.mode = "missing"
    with pytest.raises(DownloadError, match="404"):
        download_file(server.url_for(MODEL), tmp_path / MODEL.name, MODEL)


def test_unreachable(tmp_path: Path) -> None:
    with socket.socket() as sock:  # reserve a free port, then close it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DownloadError, match=r"cannot reach .*are you offline\?"):
        download_file(f"http://127.0.0.1:{port}/{MODEL.name}", tmp_path / MODEL.name, MODEL)
    assert not (tmp_path / MODEL.name).exists()


def test_unwritable_directory(server: ServerState, tmp_path: Path) -> None:
    # A regular file as parent blocks writes even for root, unlike chmod.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    target = blocker / "models"
    with pytest.raises(DownloadError, match=f"cannot write to directory {target}"):
        download_file(server.url_for(MODEL), target / MODEL.name, MODEL)


def test_disk_full(server: ServerState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(download.os, "fsync", no_space)
    with pytest.raises(DownloadError, match="disk full"):
        download_file(server.url_for(MODEL), tmp_path / MODEL.name, MODEL)


def test_progress_increases(server: ServerState, tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []

    def record(name: str, done: int, total: int) -> None:
        calls.append((name, done, total))

    download_file(server.url_for(MODEL), tmp_path / MODEL.name, MODEL, progress=record)
    assert len(calls) > 2
    assert {(name, total) for name, _, total in calls} == {(MODEL.name, MODEL.size)}
    done = [d for _, d, _ in calls]
    assert done == sorted(done)
    assert done[0] == 0 and done[-1] == MODEL.size


def test_download_model(server: ServerState, tmp_path: Path) -> None:
    model, voices = download_model(
        "int8",
        tmp_path / "data",
        base_url=server.url + "/",  # trailing slash must not double up
        model_files={"int8": MODEL},
        voices_file=VOICES,
    )
    assert model.read_bytes() == MODEL_DATA
    assert voices.read_bytes() == VOICES_DATA
    assert [p for p, _ in server.requests] == [f"/{MODEL.name}", f"/{VOICES.name}"]


def test_unknown_variant(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"unknown model variant 'q4'.*fp32.*int8"):
        download_model("q4", tmp_path, base_url="http://127.0.0.1:9/")


def test_verify_file(tmp_path: Path) -> None:
    path = tmp_path / MODEL.name
    path.write_bytes(MODEL_DATA)
    verify_file(path, MODEL)
    path.write_bytes(MODEL_DATA[:-1] + b"\0")
    with pytest.raises(FileCheckError, match="sha256 mismatch"):
        verify_file(path, MODEL)
    path.write_bytes(MODEL_DATA[:10])
    with pytest.raises(ValueError, match="expected 200000 bytes, got 10"):
        verify_file(path, MODEL)
    with pytest.raises(DownloadError, match="cannot read"):
        verify_file(tmp_path / "missing", MODEL)


def test_console_progress() -> None:
    out = io.StringIO()
    bar = ConsoleProgress(stream=out, force=True)
    bar("model.onnx", 0, 2_000_000)
    bar("model.onnx", 2_000_000, 2_000_000)
    text = out.getvalue()
    assert "model.onnx" in text and "100%" in text and "MB/s" in text
    assert text.endswith("\n")

    quiet = io.StringIO()  # not a terminal: stays silent unless forced
    ConsoleProgress(stream=quiet)("model.onnx", 1, 2)
    assert quiet.getvalue() == ""


_FILL_THEN_GROW = """
import subprocess, sys
from pathlib import Path
from wyoming_kokoro.catalog.download import DownloadError, download_file
from wyoming_kokoro.catalog.files import KnownFile

url, dest, name, size, sha = sys.argv[1:]
known = KnownFile(name, int(size), sha)
try:
    download_file(url, Path(dest) / name, known)
    print("first: done")
except DownloadError as err:
    print("first:", err)
subprocess.run(["mount", "-o", "remount,size=1m", dest], check=True)  # space freed
download_file(url, Path(dest) / name, known)
print("second: done")
"""


@pytest.mark.skipif(not can_mount_privately(), reason="needs user+mount namespaces")
def test_disk_full_on_a_real_small_filesystem_then_done_once_space_is_freed(
    server: ServerState, tmp_path: Path
) -> None:
    # A 100 kB tmpfs in a private mount namespace: the 200 kB model cannot fit.
    dest = tmp_path / "small"
    dest.mkdir()
    mount = f'mount -t tmpfs -o size=100k tmpfs {shlex.quote(str(dest))} && exec "$@"'
    args = [server.url_for(MODEL), str(dest), MODEL.name, str(MODEL.size), MODEL.sha256]
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount, "sh", sys.executable, "-c", _FILL_THEN_GROW, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.startswith("first: ") and "disk full" in first, first
    assert second == "second: done"
    # The part that fitted was kept: the second request resumed after it.
    [resumed] = server.ranges
    assert int(resumed.removeprefix("bytes=").rstrip("-")) > 0, server.requests


def test_a_verified_file_is_not_hashed_again_at_the_next_start(
    server: ServerState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --download checks the files at every server start; a Pi used to hash the
    # 310 MB model each time before it listened.
    from wyoming_kokoro.catalog import assets

    hashed: list[Path] = []
    real = assets.sha256_of

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(assets, "sha256_of", counting)
    monkeypatch.setattr(download, "sha256_of", counting)
    dest = tmp_path / MODEL.name
    download_file(server.url_for(MODEL), dest, MODEL)
    assert len(hashed) == 1  # the download itself, once
    download_file(server.url_for(MODEL), dest, MODEL)  # the next start
    assets.check_file(dest, MODEL)  # and the worker's load
    assert len(hashed) == 1
    # A file changed since (size or time) is hashed again and replaced if wrong.
    dest.write_bytes(b"x" * MODEL.size)
    assert download_file(server.url_for(MODEL), dest, MODEL) == dest
    assert dest.read_bytes() == MODEL_DATA
