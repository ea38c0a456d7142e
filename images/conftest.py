"""Shared tools of the image tests: the images under test, the ear, the report.

script/test-images builds the images and runs these tests inside a network namespace
of their own that has only loopback: the containers use host networking there, so
port 10200, the test HTTP server and zeroconf stay on that private 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # support/ (tests/conftest imports from it)


def load(name: str, path: Path) -> ModuleType:
    """Import a module of tests/ under another name (it would clash with this conftest)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: a dataclass looks its own module up in sys.modules.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The speech recognizer and WER of the main suite, and the add-on's run-script harness.
tools = load("kokoro_test_tools", TESTS / "conftest.py")
addon_tests = load("kokoro_addon_tests", TESTS / "project" / "test_addon.py")

# Figures for the closing report: image sizes, times under emulation.
REPORT: list[str] = []


def report(line: str) -> None:
    """Keep a figure for the summary at the end (and the file script/test-images prints)."""
    REPORT.append(line)
    path = os.environ.get("KOKORO_IMAGES_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("image figures")
        for line in REPORT:
            terminalreporter.write_line(line)


def image_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the image tests with script/test-images")
    return value


@pytest.fixture(scope="session")
def recognizer() -> Any:
    return tools.Recognizer()


@pytest.fixture(scope="session")
def images() -> dict[str, str]:
    """Image names by kind: standalone, addon (amd64) and addon-aarch64."""
    return {
        "standalone": image_env("KOKORO_IMAGE_STANDALONE"),
        "addon": image_env("KOKORO_IMAGE_ADDON"),
        "addon-aarch64": image_env("KOKORO_IMAGE_ADDON_AARCH64"),
    }


class Names:
    """Container and volume names unique to one test; all removed when it ends."""

    def __init__(self, test: str) -> None:
        self.base = "kokoro-test-" + re.sub(r"[^a-z0-9]+", "-", test.lower()).strip("-")[-40:]
        self.made: list[str] = []

    def __call__(self, suffix: str) -> str:
        name = f"{self.base}-{suffix}"
        self.made.append(name)
        return name

    def cleanup(self) -> None:
        from podman import podman

        for name in self.made:
            podman("rm", "--force", "--time", "5", "--ignore", name, check=False, timeout=60)
        for name in self.made:
            podman("volume", "rm", "--force", name, check=False)


@pytest.fixture
def names(request: pytest.FixtureRequest) -> Iterator[Names]:
    made = Names(request.node.name)
    yield made
    made.cleanup()
