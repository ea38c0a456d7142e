"""The HTTP door of a real server: its address, requests, decoded audio."""

from __future__ import annotations

import io
import json
import re
import urllib.request

import numpy as np

from support.server_process import ServerProcess

HTTP_READY = re.compile(r"HTTP API on http://127\.0\.0\.1:(\d+)/v1")


def http_base(server: ServerProcess) -> str:
    """http://127.0.0.1:PORT of the server's HTTP side (logged before "Ready on")."""
    for line in server.log:
        if match := HTTP_READY.search(line):
            return f"http://127.0.0.1:{match.group(1)}"
    raise AssertionError("no HTTP API line in the log:\n" + "".join(server.log))


def http_server(*args: str, env: dict[str, str] | None = None) -> ServerProcess:
    return ServerProcess("--http", "tcp://127.0.0.1:0", *args, env=env)


def decode(data: bytes, fmt: str) -> np.ndarray:
    """Any response format → int16 mono samples at 24 kHz."""
    if fmt == "pcm":
        return np.frombuffer(data, dtype=np.int16)
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=24000)
    blocks = []
    with av.open(io.BytesIO(data)) as container:
        for frame in container.decode(audio=0):
            blocks += [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    blocks += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(blocks)


def get_json(url: str, headers: dict[str, str] | None = None) -> dict:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as reply:
        return json.loads(reply.read())
