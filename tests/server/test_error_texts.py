"""What a client is told when a file fails: the same at both doors, without the
server's paths (the log keeps those; Home Assistant shows the client's text)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.http_client import http_base, http_server
from support.wyoming_io import run, synthesize

# A real server, whose worker starts (to fail).
pytestmark = pytest.mark.model

BODY = {"model": "tts-1", "input": "Hello.", "voice": "jm_kumo", "response_format": "wav"}


def http_error(base: str) -> str:
    request = urllib.request.Request(
        f"{base}/v1/audio/speech",
        data=json.dumps(BODY).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    return json.loads(refused.value.read())["error"]["message"]


def test_a_model_that_cannot_load_is_named_without_its_path_at_both_doors(
    tmp_path: Path,
) -> None:
    name = "kokoro.onnx"
    private = tmp_path / "private-dir" / name
    private.parent.mkdir()
    private.write_bytes(b"not a model" * 100)
    with http_server("--model", str(private)) as srv:
        spoken = run(synthesize(srv.uri, "Hello.")).errors
        said = http_error(http_base(srv))
        log = "".join(srv.log)
    assert len(spoken) == 1, spoken
    for text in (spoken[0], said):
        assert "private-dir" not in text and str(tmp_path) not in text, text
        assert name in text, text  # which file, by its name
    assert str(private) in log  # the operator still sees where
