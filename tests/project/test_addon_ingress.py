"""The add-on's page in Home Assistant's sidebar (ingress): declared in config.yaml,
served by the run script's server whatever http_api says, on a port that is not
published; the image test (images/test_images.py) serves it for real."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from test_addon import ADDON, DEFAULTS, RUN, run_script

from wyoming_kokoro import options


def config() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ADDON / "config.yaml").read_text(encoding="utf-8"))
    return loaded


def test_the_panel_is_declared_and_its_port_not_published() -> None:
    app = config()
    assert app["ingress"] is True
    assert app["panel_title"] and re.fullmatch(r"mdi:[a-z0-9-]+", app["panel_icon"])
    match = re.search(r"readonly ingress_port=(\d+)", RUN.read_text())
    assert match, "the run script names no ingress_port"
    port = int(match.group(1))
    assert app["ingress_port"] == port
    assert f"{port}/tcp" not in app["ports"]  # only the Supervisor reaches it
    # The server's own default peer is the Supervisor's address.
    assert options.INGRESS_PEER.default == "172.30.32.2"


def test_the_page_is_served_whatever_http_api_says(tmp_path: Path) -> None:
    for http_api in (False, True):
        result = run_script(tmp_path, {**DEFAULTS, "http_api": http_api})
        assert result.returncode == 0, result.stderr
        args = json.loads(result.stdout.splitlines()[-1])["args"]
        at = args.index("--ingress")
        assert args[at + 1] == "tcp://0.0.0.0:8099"
        assert "--ingress-peer" not in args  # the default: the Supervisor
        assert ("--http" in args) is http_api
