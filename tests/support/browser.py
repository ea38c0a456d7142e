"""Debian's chromium, headless and offline, driven by Playwright (its own browser
download cannot be reached): a fresh profile per page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
# The network is closed: nothing may try it (no updates, sync, QUIC probes).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


@contextmanager
def chromium_page(profile: Path, width: int = 900, height: int = 720) -> Iterator[Any]:
    """A Playwright page in a fresh chromium (`profile`: its --user-data-dir)."""
    # No skip: script/setup installs chromium, and a missing browser is a failure.
    assert CHROMIUM.exists(), "Debian's chromium is missing: run script/setup"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
            bypass_csp=True,  # the page's strict CSP would refuse playwright's own probes
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()
