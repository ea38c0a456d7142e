"""Every example in README.md and docs/ runs as written on a default install.

A default install is the embedded int8 model and five voices with an empty data dir:
no `--download`. Each fenced block is run by its kind (shell commands of kokoro-say,
curl and wyoming-kokoro, Python, SSML, JSON), read by the product's own reader (a
data dir's presets.yaml or lexicon.txt), or marked as not run here with its reason
(tests/support/doc_examples.py). The host and port of the examples are the only thing
rewritten, and only here.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.doc_examples import Block, blocks, programs, why_not_runnable
from support.http_client import http_base, http_server
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.catalog.presets_file import parse_presets
from wyoming_kokoro.text.g2p import load_lexicon
from wyoming_kokoro.text.ssml import is_ssml, parse

BLOCKS = blocks()
EXAMPLE_HOST = "http://HOST:8880"
# What `-f NAME` reads when an example names a file of the user's.
INPUT_TEXT = "The garage door is open. Dinner is ready."


def _of(*kinds: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in kinds and not b.mark]


def _default_voices() -> tuple[str, ...]:
    return resolve(None, None, []).voice_names


# ---------------------------------------------------------------- fast: no model


def test_every_block_is_runnable_by_its_kind_or_marked_with_a_reason() -> None:
    assert len(BLOCKS) > 20 and {b.doc for b in BLOCKS} >= {"README.md", "docs/voices.md"}
    wrong = {b.id: why for b in BLOCKS if (why := why_not_runnable(b))}
    assert not wrong, "mark these <!-- example: not run: REASON --> or make them runnable"


def test_the_marks_are_read_from_the_docs(tmp_path: Path) -> None:
    """The reader itself: a mark counts only just before its block."""
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- example: not run: a container -->\n```sh\ndocker ps\n```\n\n"
        "text\n\n```sh\ndocker ps\n```\n\n  ```sh\n  kokoro-say hi -o a.wav\n  ```\n"
    )
    first, second, third = blocks((page,), tmp_path)
    assert (first.skip_reason, why_not_runnable(first)) == ("a container", None)
    assert second.mark == "" and "docker" in str(why_not_runnable(second))
    assert third.text == "kokoro-say hi -o a.wav\n" and why_not_runnable(third) is None


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.data_file], ids=lambda b: b.id)
def test_a_data_file_example_is_read_whole_by_the_product(
    block: Block, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    if block.data_file == "presets.yaml":
        written = [line.split(":")[0] for line in block.text.splitlines() if line[:1].isalnum()]
        presets = parse_presets(block.text, _default_voices(), block.id)
        assert sorted(presets) == sorted(written)
    else:
        path = tmp_path / "lexicon.txt"
        path.write_text(block.text, encoding="utf-8")
        entries = [line for line in block.text.splitlines() if line.strip()]
        assert len(load_lexicon(path)) == len(entries)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("block", _of("json"), ids=lambda b: b.id)
def test_a_json_example_is_json(block: Block) -> None:
    for line in block.text.splitlines():
        if line.strip():
            assert isinstance(json.loads(line), dict)


@pytest.mark.parametrize("block", _of("xml"), ids=lambda b: b.id)
def test_an_ssml_example_is_ssml_we_read(block: Block, caplog: pytest.LogCaptureFixture) -> None:
    assert is_ssml(block.text)
    # Broken SSML is read plainly with a warning: an example must need no such reading.
    with caplog.at_level("WARNING", logger="wyoming_kokoro.text.ssml"):
        assert parse(block.text)
    assert not caplog.records, [r.getMessage() for r in caplog.records]


# ---------------------------------------------------------------- run: the real model


@pytest.fixture(scope="module")
def default_install(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a default install: an empty data dir, but for the files the
    docs' own presets.yaml and lexicon.txt examples show (other examples use them)."""
    home = tmp_path_factory.mktemp("xdg-data")
    data = home / "wyoming-kokoro"
    data.mkdir()
    for block in BLOCKS:
        if block.data_file:
            (data / block.data_file).write_text(block.text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOKORO_DATA")}
    bin_dir = str(Path(sys.executable).parent)
    return {**env, "XDG_DATA_HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


@pytest.fixture(scope="module")
def served_default(default_install: dict[str, str]) -> Iterator[ServerProcess]:
    """One server for the file's examples, both doors, on a default install."""
    with http_server("--idle-timeout", "120", env=default_install) as running:
        yield running


@pytest.fixture(scope="module")
def examples_server(served_default: ServerProcess) -> str:
    """The shared server's http://127.0.0.1:PORT."""
    return http_base(served_default)


def _commands(block: Block) -> list[str]:
    return block.commands() if block.lang == "sh" else []


RUN = [
    pytest.param(b, id=b.id, marks=pytest.mark.model)
    for b in BLOCKS
    if not b.mark and b.lang in ("sh", "python")
]


@pytest.mark.parametrize("block", RUN)
def test_an_example_runs_as_written(
    block: Block, default_install: dict[str, str], request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if block.lang == "python":
        base = request.getfixturevalue("examples_server")
        script = tmp_path / "example.py"
        script.write_text(block.text.replace(EXAMPLE_HOST, base))
        _ran([sys.executable, str(script)], tmp_path, default_install)
        return
    for command in _commands(block):
        called = programs(command)
        if called == ["wyoming-kokoro"]:
            _serves(command, default_install)
            continue
        if "curl" in called:
            base = request.getfixturevalue("examples_server")
            # --fail-with-body: an HTTP error fails the example instead of saving its JSON.
            command = command.replace(EXAMPLE_HOST, base).replace(
                "curl ", "curl --fail-with-body -sS ", 1
            )
        for name in _inputs(command):
            (tmp_path / name).write_text(INPUT_TEXT, encoding="utf-8")
        result = _ran(["bash", "-o", "pipefail", "-c", command], tmp_path, default_install)
        for name in _outputs(command):
            assert name == "-" or (tmp_path / name).stat().st_size > 0, f"{command}: no {name}"
        if not _outputs(command):
            assert result.stdout.strip(), f"{command} printed nothing"


@pytest.mark.model
@pytest.mark.parametrize("block", _of("xml"), ids=lambda b: b.id)
def test_an_ssml_example_is_spoken_over_http(block: Block, examples_server: str) -> None:
    # The document as written, at the fastest speed: every element is read as at 1.0,
    # in half the audio (what its elements sound like is tests/text/test_ssml.py's).
    asked = {"model": "tts-1", "input": block.text, "response_format": "wav", "speed": 2.0}
    body = json.dumps(asked)
    request = urllib.request.Request(
        f"{examples_server}/v1/audio/speech",
        body.encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        assert reply.status == 200 and len(reply.read()) > 24000


HINT = "af_heart is one of Kokoro's 54 voices, not installed: run once with --download int8"


@pytest.mark.model
def test_a_voice_a_default_install_lacks_is_named_with_the_way_to_get_it(
    served_default: ServerProcess, default_install: dict[str, str], tmp_path: Path
) -> None:
    """At both doors and in kokoro-say: not "unknown voice", but how to install it."""
    body = json.dumps({"model": "tts-1", "input": "Hi.", "voice": "af_heart"}).encode()
    request = urllib.request.Request(
        f"{http_base(served_default)}/v1/audio/speech", body, {"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 400 and HINT in refused.value.read().decode()
    # Wyoming speaks with the default voice (Home Assistant may hold a stale choice)
    # and says why in the log.
    reply = run(synthesize(served_default.uri, "Hi.", voice="af_heart"))
    assert reply.errors == [] and reply.audio
    assert any(HINT in line for line in served_default.log)
    said = subprocess.run(
        ["kokoro-say", "-v", "af_heart", "Hi.", "-o", "hi.wav"],
        cwd=tmp_path,
        env=default_install,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert said.returncode != 0 and HINT in said.stderr and not (tmp_path / "hi.wav").exists()


def _ran(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"{args[-1]}\n{result.stderr[-3000:]}"
    return result


def _serves(command: str, env: dict[str, str]) -> None:
    """A server command starts and stops cleanly (its --uri made 127.0.0.1, port 0)."""
    words = shlex.split(command, comments=True)[1:]
    if "--uri" in words:
        at = words.index("--uri")
        del words[at : at + 2]
    with ServerProcess(*words, env=env) as running:
        assert running.port
    log = "".join(running.log)
    assert running.proc is not None and running.proc.returncode == 0, log
    # The server starts with a --voice it cannot speak, with a warning: as written, none.
    assert "WARNING" not in log, log


def _inputs(command: str) -> list[str]:
    words = shlex.split(command.split("|")[-1] if "|" in command else command, comments=True)
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-f", "--file")]


def _outputs(command: str) -> list[str]:
    words = shlex.split(command.split("|")[-1] if "|" in command else command, comments=True)
    flags = ("-o", "--output", "--captions")
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in flags]
