"""deploy/kubernetes/kokoro.yaml run with ``podman kube play`` and spoken through.

No cluster is reachable here; podman runs the Deployment's pod from the manifest
itself (security context, resources, volumes, the liveness probe as a health check).
What podman 4.3 cannot do is changed in a copy, and only that: the image is the one
built here, one replica (host networking gives each port once), and no containerPort
list (podman publishes ports only on bridge networks). The HorizontalPodAutoscaler,
PodDisruptionBudget and Service are checked offline by tests/project/test_deploy.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shlex
import subprocess
import time
import urllib.request
import wave
from pathlib import Path
from typing import Any

import yaml
from conftest import ROOT, report
from podman import Container, podman, podman_prefix
from support.judge import wer
from support.wyoming_io import synthesize
from test_images import SENTENCE, URI, describe, process_uids

MANIFEST = ROOT / "deploy" / "kubernetes" / "kokoro.yaml"
HTTP = "http://127.0.0.1:8880"
POD = "kokoro-pod-0"
CONTAINER = f"{POD}-kokoro"
# podman kube play has no --runtime or --ulimit flags; containers.conf carries them.
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
"""


def playable(image: str, out: Path) -> Path:
    docs = list(yaml.safe_load_all(MANIFEST.read_text(encoding="utf-8")))
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    deployment["spec"]["replicas"] = 1
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    container["image"] = image
    del container["ports"]
    out.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    return out


def kube(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "containers.conf"
    conf.write_text(CONTAINERS_CONF, encoding="ascii")
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    command = [*podman_prefix(), "kube", "play", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, f"{shlex.join(args)}: {result.stdout}{result.stderr}"
    return result


def logs(container: str) -> str:
    result = podman("logs", container, check=False)
    return result.stdout + result.stderr


def wait_ready(timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while "Ready on tcp://0.0.0.0:10200" not in logs(CONTAINER):
        assert time.monotonic() < deadline, f"not ready:\n{logs(CONTAINER)[-3000:]}"
        time.sleep(0.5)


def http_json(path: str) -> Any:
    with urllib.request.urlopen(HTTP + path, timeout=10) as response:
        return json.load(response)


def speak_http(text: str) -> bytes:
    body = {"model": "tts-1", "input": text, "voice": "jm_kumo", "response_format": "wav"}
    request = urllib.request.Request(
        HTTP + "/v1/audio/speech",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=180) as response:
        data = response.read()
    with wave.open(io.BytesIO(data)) as wav:
        assert wav.getframerate() == 24000
        return wav.readframes(wav.getnframes())


class Inspected:
    def __init__(self, name: str) -> None:
        result = podman("inspect", name)
        self.data = json.loads(result.stdout)[0]

    def host(self, key: str) -> Any:
        return self.data["HostConfig"][key]


def test_kube_play_serves_wyoming_and_http(
    images: dict[str, str], tmp_path: Path, recognizer: Any
) -> None:
    play = playable(images["standalone"], tmp_path / "kokoro.yaml")
    kube(tmp_path, "--network", "host", "--replace", str(play))
    try:
        wait_ready()
        # The manifest's limits and security context reached the container.
        inspected = Inspected(CONTAINER)
        assert inspected.host("Memory") == 768 * 1024 * 1024
        assert inspected.host("NanoCpus") == 2_000_000_000
        assert inspected.host("ReadonlyRootfs") is True
        assert podman("exec", CONTAINER, "touch", "/probe", check=False).returncode != 0
        # Readiness: /health answers without starting the worker.
        health = http_json("/health")
        assert health["status"] == "ok" and health["worker"] == "unloaded", health
        # Liveness: the Wyoming describe, run by podman as the container's health check.
        assert podman("healthcheck", "run", CONTAINER, check=False).returncode == 0
        info = asyncio.run(describe())
        assert [p.name for p in info.tts] == ["kokoro"]
        # Idle, with no cut running: the image ships the model cut, linked in at start.
        assert "Cutting the model" not in logs(CONTAINER)
        idle = rss(CONTAINER, "VmRSS")
        # Spoken through both ports, heard by the recognizer.
        reply = asyncio.run(synthesize(URI, SENTENCE, timeout=180))
        assert wer(SENTENCE, recognizer.transcribe(reply.audio)) <= 0.25
        text = "The kitchen lights are off."
        pcm = speak_http(text)
        assert wer(text, recognizer.transcribe(pcm)) <= 0.25
        assert http_json("/health")["worker"] != "unloaded"
        # Server and worker run as the manifest's user, writing only to its volumes.
        running = Container(CONTAINER, images["standalone"])
        assert {uid for uid, _ in process_uids(running).values()} == {1000}
        report(
            f"kube play replica: RSS idle {idle} MB; after two requests {rss(CONTAINER, 'VmRSS')}"
            f" MB, peak {rss(CONTAINER, 'VmHWM')} MB (sum over its processes)"
        )
    finally:
        podman("pod", "rm", "--force", POD, check=False, timeout=120)
        for volume in ("data", "tmp"):
            podman("volume", "rm", "--force", volume, check=False)


RSS_PROBE = """
import os, pathlib, sys
total = 0
for p in pathlib.Path('/proc').glob('[0-9]*'):
    if int(p.name) == os.getpid():
        continue
    for line in (p / 'status').read_text().splitlines():
        if line.startswith(sys.argv[1] + ':'):
            total += int(line.split()[1])
print(round(total / 1024))
"""


def rss(container: str, field: str) -> int:
    """MB of VmRSS (now) or VmHWM (peak) over the container's processes but the probe."""
    return int(podman("exec", container, "python3", "-c", RSS_PROBE, field).stdout)
