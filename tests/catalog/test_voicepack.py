"""The add-on's voice-pack download (wyoming_kokoro.catalog.voicepack), on 127.0.0.1.

The pack is fetched with retries and resumed, and the server is restarted only once
nobody is connected to it; the run-script shape (downloader in the background, then
``exec`` of the server) is reproduced with bash and a stand-in server.
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wyoming_kokoro.catalog import voicepack
from wyoming_kokoro.catalog.files import KnownFile

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model

DATA = random.Random(3).randbytes(300_000)
PACK = KnownFile("voices-v1.0.bin", len(DATA), hashlib.sha256(DATA).hexdigest())


class Pack:
    """Serves DATA as the pack: the first *fail* answers are 500s, the first 200 is cut
    after *cut* bytes when set; Range requests are honoured."""

    def __init__(self, fail: int = 0, cut: int | None = None) -> None:
        self.fail, self.cut = fail, cut
        self.requests: list[str | None] = []
        pack = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                rng = self.headers.get("Range")
                pack.requests.append(rng)
                if pack.fail > 0:
                    pack.fail -= 1
                    self.send_error(500)
                    return
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                body = DATA[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if pack.cut is not None:
                    body, pack.cut = body[: pack.cut], None
                    self.close_connection = True
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def served() -> Iterator[Pack]:
    pack = Pack(fail=2, cut=100_000)
    yield pack
    pack.close()


def test_fetch_retries_and_resumes(served: Pack, tmp_path: Path) -> None:
    path = voicepack.fetch(tmp_path, served.url, known=PACK, first_pause_s=0.05)
    assert path.read_bytes() == DATA
    # two failures, one cut answer, then the rest by Range from where it stopped
    assert served.requests == [None, None, None, "bytes=100000-"]
    assert not (tmp_path / "voices-v1.0.bin.part").exists()


def test_fetch_stops_when_the_server_is_gone(tmp_path: Path) -> None:
    pack = Pack(fail=100)
    try:
        with pytest.raises(voicepack.ServerGone):
            voicepack.fetch(tmp_path, pack.url, known=PACK, first_pause_s=0.05, alive=lambda: False)
    finally:
        pack.close()


def test_pauses_double_up_to_the_longest() -> None:
    it = voicepack.pauses(10, 45)
    assert [next(it) for _ in range(5)] == [10, 20, 40, 45, 45]


PROC_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid
   0: 00000000:27D8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0
   1: 0100007F:27D8 0100007F:C350 {state} 00000000:00000000 00:00000000 00000000  0
   2: 0100007F:C351 0100007F:22B8 01 00000000:00000000 00:00000000 00000000     0
"""


@pytest.mark.parametrize(("state", "busy"), [("01", 1), ("06", 0)])
def test_connections_reads_proc_net(tmp_path: Path, state: str, busy: int) -> None:
    (tmp_path / "tcp").write_text(PROC_TCP.format(state=state))
    # 10200 listens; a client on it counts, one from elsewhere to 8888 (0x22B8) does not
    assert voicepack.connections([10200, 8880], tmp_path) == (True, busy)
    assert voicepack.connections([8880], tmp_path) == (False, 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Stands in for the server: listens, writes "stopped" and exits 0 on SIGTERM.
FAKE_SERVER = textwrap.dedent(
    """\
    #!{python}
    import signal, socket, sys
    s = socket.create_server(("127.0.0.1", int(sys.argv[1])))
    def stop(*_):
        open(sys.argv[2], "w").write("stopped")
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    while True:
        conn, _ = s.accept()
        conn.recv(1)
        conn.close()
    """
)


def test_run_script_shape_restarts_the_idle_server(served: Pack, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    server = bin_dir / "wyoming-kokoro"
    server.write_text(FAKE_SERVER.format(python=sys.executable))
    server.chmod(0o755)
    port, marker, data = free_port(), tmp_path / "marker", tmp_path / "data"
    # The test's pack stands in for the published one (its size and sha256).
    hook = (
        "import sys, runpy; from wyoming_kokoro.catalog import files, voicepack;"
        f"voicepack.VOICES_FILE = files.KnownFile({PACK.name!r}, {PACK.size}, {PACK.sha256!r});"
        "sys.argv[0] = 'voicepack'; sys.exit(voicepack.main())"
    )
    script = (
        f'{sys.executable} -c "$HOOK" --data-dir {data} --url {served.url} '
        f'--restart-pid "$$" --port {port} --first-pause 0.05 2> {tmp_path / "log"} &\n'
        f"exec {server} {port} {marker}\n"
    )
    env = {**os.environ, "HOOK": hook}
    proc = subprocess.Popen(["bash", "-c", script], env=env)
    try:
        # A client connected: no restart while it is there.
        deadline = time.monotonic() + 20
        client = None
        while client is None and time.monotonic() < deadline:
            try:
                client = socket.create_connection(("127.0.0.1", port), timeout=1)
            except OSError:
                time.sleep(0.05)
        assert client is not None
        while not (data / PACK.name).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (data / PACK.name).read_bytes() == DATA
        time.sleep(4)
        assert proc.poll() is None, "restarted while a client was connected"
        client.close()
        assert proc.wait(timeout=20) == 0
        assert marker.read_text() == "stopped"
        assert "restarting the server once it is idle" in (tmp_path / "log").read_text()
    finally:
        proc.kill()
        proc.wait()


def test_a_verified_pack_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / PACK.name).write_bytes(DATA)
    monkeypatch.setattr(voicepack, "VOICES_FILE", PACK)
    # No server to ask, nothing to restart: returns at once without a request.
    assert voicepack.main(["--data-dir", str(tmp_path), "--url", "http://127.0.0.1:9/"]) == 0
