"""The add-on image's first start: Kokoro's 54 voices fetched into /data, for real.

The add-on's own s6 run script runs in the image (read-only root), with stand-ins for
what the Home Assistant base image would provide: bashio (tests/project/test_addon.py's) and
s6-supervise, which starts the service again after it exits 0 (its finish script halts
the container only on a failure). The voice pack comes from a local HTTP server: fast,
slow, failing, or cut off mid-file. The real pack cannot be fetched on this network,
so the pack is made here (the five embedded voices under the 54 names, af_heart a
slightly changed jm_kumo) and its size and sha256 replace the published ones in a copy
of files.py mounted over the image's.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import io
import re
import shlex
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, Names, addon_tests, report
from podman import Container, podman, volume_path
from support.judge import wer
from support.wyoming_io import synthesize
from test_images import SENTENCE, URI, describe

from wyoming_kokoro.catalog.assets import embedded_voices
from wyoming_kokoro.catalog.voices import CATALOG_GRADES

PACK = "voices-v1.0.bin"
SITE = "/opt/kokoro/lib/python3.11/site-packages/wyoming_kokoro/catalog/files.py"
READY = "Ready on tcp://0.0.0.0:10200"

# Stand-ins, mounted at /command: the scripts' shebang is `#!/command/with-contenv bashio`.
WITH_CONTENV = """#!/bin/bash
# with-contenv bashio SCRIPT: bashio's functions (the test stand-in), then the script.
shift
source /command/bashio.sh
source "$1"
"""
SUPERVISE = """#!/bin/bash
# s6-supervise for the kokoro longrun: again after exit 0, done after a failure.
while true; do
    code=0
    /etc/s6-overlay/s6-rc.d/kokoro/run || code=$?
    echo "supervise: kokoro exited ${code}" >&2
    [[ ${code} -eq 0 ]] || exit "${code}"
done
"""


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A voices file of the published pack's layout: 54 voices of (510, 1, 256)."""
    source = embedded_voices()
    assert source is not None
    embedded = dict(np.load(source))
    out = tmp_path_factory.mktemp("pack") / PACK
    voices = {}
    for name in CATALOG_GRADES:
        voices[name] = embedded.get(name, embedded["jm_kumo"])
    # A voice of its own, still clear in English: half jm_kumo, half jf_gongitsune.
    voices["af_heart"] = (embedded["jm_kumo"] + embedded["jf_gongitsune"]) / 2
    buffer = io.BytesIO()
    np.savez(buffer, **voices)  # type: ignore[arg-type]
    out.write_bytes(buffer.getvalue())
    return out


def known_pack(pack: Path, out: Path) -> Path:
    """files.py of the image, with the test pack's size and sha256 for voices-v1.0.bin."""
    text = (ROOT / "wyoming_kokoro" / "catalog" / "files.py").read_text(encoding="utf-8")
    data = pack.read_bytes()
    patched, count = re.subn(
        r'("voices-v1\.0\.bin",\s*)[\d_]+(,\s*)"[0-9a-f]{64}"',
        rf'\g<1>{len(data)}\g<2>"{hashlib.sha256(data).hexdigest()}"',
        text,
    )
    assert count == 1
    out.write_text(patched, encoding="utf-8")
    return out


class PackServer:
    """Serves the pack on 127.0.0.1: fast, slow (1 MB/s), failing (500), or cut (the
    first answer ends at 40 %); honours Range. Records the Range of every request."""

    def __init__(self, pack: Path, mode: str) -> None:
        self.requests: list[str | None] = []
        data, server = pack.read_bytes(), self
        self.mode = mode

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                rng = self.headers.get("Range")
                server.requests.append(rng)
                if self.path != f"/{PACK}" or server.mode == "failing":
                    self.send_error(404 if self.path != f"/{PACK}" else 500)
                    return
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                body = data[start:]
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.mode == "cut" and not start:
                    body = body[: len(data) * 2 // 5]
                    self.close_connection = True
                step = 64 * 1024
                for i in range(0, len(body), step):
                    self.wfile.write(body[i : i + step])
                    if server.mode == "slow":
                        time.sleep(step / 1e6)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def start_addon(
    image: str, names: Names, tmp_path: Path, pack: Path, url: str, model: str = "embedded"
) -> tuple[Container, str]:
    stand_ins = tmp_path / "command"
    stand_ins.mkdir()
    options = {**addon_tests.DEFAULTS, "model": model}
    assignments = "declare -A __CONFIG=(\n" + "".join(
        f"    [{key}]={shlex.quote(addon_tests.bash_value(value))}\n"
        for key, value in options.items()
    )
    (stand_ins / "bashio.sh").write_text(
        addon_tests.BASHIO_STUB.format(assignments=assignments + ")")
    )
    for name, text in (("with-contenv", WITH_CONTENV), ("supervise", SUPERVISE)):
        (stand_ins / name).write_text(text)
        (stand_ins / name).chmod(0o755)
    files = known_pack(pack, tmp_path / "files.py")
    data = names("data")
    podman("volume", "create", data)
    flags = ["--volume", f"{stand_ins}:/command:ro", "--volume", f"{files}:{SITE}:ro"]
    container = Container.start(
        names("addon"),
        image,
        [],
        volumes={data: "/data", names("share"): "/share/kokoro"},
        read_only=True,
        entrypoint="/command/supervise",
        env={"KOKORO_DOWNLOAD_URL": url, "STUB_MKDIR_LOG": "/dev/null"},
        flags=flags,
    )
    container.wait_for_log(READY, 90)
    return container, data


def voices_now() -> set[str]:
    info = asyncio.run(describe())
    (program,) = info.tts
    return {v.name for v in program.voices if v.installed}


def wait_restarted(container: Container, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = container.logs()
        if logs.count(READY) >= 2:
            return logs
        time.sleep(0.5)
    raise AssertionError(f"the server was not restarted:\n{container.logs()[-4000:]}")


def wait_for_the_cut(container: Container, timeout: float = 600) -> None:
    """Until the restarted server decodes as it will from now on: the model cut for
    windowed decoding is made anew in the background after a restart that interrupted
    it, and the same text sounds a little different before and after."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        since = container.logs().rsplit(READY, 1)[1]
        if "Cutting the model" not in since or "Cut the model for decoding" in since:
            return
        time.sleep(1)
    raise AssertionError("the model cut did not finish")


def restart_server(container: Container) -> None:
    """SIGTERM to the server (PID 1 is the stand-in supervisor, which starts it again)."""
    probe = (
        "import os, pathlib, signal\n"
        "for p in pathlib.Path('/proc').glob('[0-9]*'):\n"
        "    argv = (p / 'cmdline').read_bytes().split(b'\\0')\n"
        "    if len(argv) > 1 and argv[1].endswith(b'/wyoming-kokoro'):\n"
        "        os.kill(int(p.name), signal.SIGTERM)\n"
    )
    assert container.exec("python3", "-c", probe).returncode == 0


def assert_speaks_af_heart_by_default(container: Container, recognizer: Any) -> None:
    assert {"af_heart", "bf_emma", "ff_siwis", "jm_kumo"} <= voices_now()
    wait_for_the_cut(container)
    asyncio.run(synthesize(URI, SENTENCE, voice="af_heart", timeout=180))  # warm
    default = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
    chosen = asyncio.run(synthesize(URI, SENTENCE, voice="af_heart", timeout=180))
    kumo = asyncio.run(synthesize(URI, SENTENCE, voice="jm_kumo", timeout=180))
    assert same_voice(default.audio, chosen.audio)
    assert not same_voice(default.audio, kumo.audio)
    assert wer(SENTENCE, recognizer.transcribe(default.audio)) <= 0.25


def same_voice(a: bytes, b: bytes) -> bool:
    """The same text in the same voice: as long, and the same waveform (a first call
    decoded in windows may differ from a later one in the last bits)."""
    x, y = (np.frombuffer(pcm, dtype="<i2").astype(np.float64) for pcm in (a, b))
    return len(x) == len(y) and float(np.corrcoef(x, y)[0, 1]) > 0.98


@pytest.fixture
def served(request: pytest.FixtureRequest, pack: Path) -> Iterator[PackServer]:
    server = PackServer(pack, request.param)
    yield server
    server.close()


@pytest.mark.parametrize("served", ["fast", "cut"], indirect=True)
def test_first_start_fetches_the_voices_then_af_heart_speaks(
    served: PackServer,
    images: dict[str, str],
    names: Names,
    tmp_path: Path,
    pack: Path,
    recognizer: Any,
) -> None:
    start = time.monotonic()
    container, data = start_addon(images["addon"], names, tmp_path, pack, served.url)
    with container:
        logs = wait_restarted(container, 120)
        took = time.monotonic() - start
        assert "restarting the server once it is idle" in logs
        assert "supervise: kokoro exited 0" in logs
        if served.mode == "cut":
            # The cut answer, a pause, then the rest from where it stopped.
            assert (
                served.requests[0] is None
                and served.requests[-1] == f"bytes={pack.stat().st_size * 2 // 5}-"
            ), served.requests
            assert "interrupted after" in logs
        else:
            assert served.requests == [None]
        report(f"add-on first start, {served.mode} pack server: 54 voices after {took:.0f} s")
        assert_speaks_af_heart_by_default(container, recognizer)
        stored = Path(volume_path(data))
        assert (stored / PACK).read_bytes() == pack.read_bytes()
        assert not (stored / f"{PACK}.part").exists()
        # The next start finds it verified: no request, no second restart.
        before = len(served.requests)
        restart_server(container)
        deadline = time.monotonic() + 60
        while container.logs().count(READY) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(4)
        assert container.logs().count(READY) == 3
        assert len(served.requests) == before


@pytest.mark.parametrize("served", ["slow"], indirect=True)
def test_embedded_voices_speak_while_the_pack_downloads(
    served: PackServer,
    images: dict[str, str],
    names: Names,
    tmp_path: Path,
    pack: Path,
    recognizer: Any,
) -> None:
    container, _ = start_addon(images["addon"], names, tmp_path, pack, served.url)
    with container:
        assert voices_now() == {"jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"}
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        assert wer(SENTENCE, recognizer.transcribe(reply.audio)) <= 0.25
        assert container.logs().count(READY) == 1, "restarted before the pack was complete"
        wait_restarted(container, 180)
        assert_speaks_af_heart_by_default(container, recognizer)


@pytest.mark.parametrize("served", ["failing"], indirect=True)
def test_a_failing_server_leaves_the_embedded_voices(
    served: PackServer,
    images: dict[str, str],
    names: Names,
    tmp_path: Path,
    pack: Path,
    recognizer: Any,
) -> None:
    container, data = start_addon(images["addon"], names, tmp_path, pack, served.url)
    with container:
        container.wait_for_log("next try in 10 s", 30)
        container.wait_for_log("next try in 20 s", 30)  # retried, with a longer pause
        assert len(served.requests) == 2
        assert "jm_kumo" in voices_now() and "af_heart" not in voices_now()
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        assert wer(SENTENCE, recognizer.transcribe(reply.audio)) <= 0.25
        assert container.logs().count(READY) == 1
        assert not (Path(volume_path(data)) / PACK).exists()


@pytest.mark.parametrize("served", ["fast"], indirect=True)
def test_offline_downloads_nothing(
    served: PackServer, images: dict[str, str], names: Names, tmp_path: Path, pack: Path
) -> None:
    container, _ = start_addon(images["addon"], names, tmp_path, pack, served.url, model="offline")
    with container:
        time.sleep(5)
        assert served.requests == []
        assert "af_heart" not in voices_now()
        assert "voicepack" not in container.logs()
