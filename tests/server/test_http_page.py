"""The page at `/` in a real headless browser (Debian's chromium) with no network.

It must load with nothing fetched from elsewhere, list the voices, and produce
audio the browser can play and the speech judge can hear. Under Home Assistant's
ingress prefix, on the ingress listener: test_http_page_panel.py.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

import pytest
from support.browser import chromium_page
from support.http_client import decode, http_base, http_server
from support.server_process import ServerProcess

TEXT = "Turn on the kitchen lights."


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with http_server("--idle-timeout", "120") as running:
        yield running


@pytest.fixture
def page(tmp_path):
    with chromium_page(tmp_path / "profile") as opened:
        yield opened


def test_the_page_lists_voices_and_speaks_offline(server, page, listener, tmp_path) -> None:
    base = http_base(server)
    elsewhere: list[str] = []

    def only_local(route) -> None:
        url = route.request.url
        if url.startswith(base + "/") or url.startswith(("blob:", "data:")):
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    page.route("**/*", only_local)
    failed: list[str] = []
    page.on("response", lambda r: r.status == 404 and failed.append(r.url))
    spoken_as: list[str] = []
    page.on(
        "response",
        lambda r: (
            r.url.endswith("/v1/audio/speech")
            and spoken_as.append(r.headers.get("x-kokoro-voice", ""))
        ),
    )
    page.goto(base + "/")
    page.wait_for_function("document.getElementById('voice').options.length > 0")
    voices = page.eval_on_selector_all("#voice option", "els => els.map(e => e.value)")
    assert "jm_kumo" in voices and len(voices) >= 5
    assert page.input_value("#voice") == "jm_kumo"  # the server's default
    # The icon is in the page: the browser never asks the server for /favicon.ico.
    assert page.get_attribute("link[rel=icon]", "href").startswith("data:")
    assert page.is_disabled("#share")  # no blend yet: the share means nothing

    page.fill("#text", TEXT)
    page.select_option("#blend", "jf_gongitsune")
    assert page.is_enabled("#share")
    page.fill("#share", "20")
    page.dispatch_event("#share", "input")
    # A blend is shown as the server shows it (log, X-Kokoro-Voice): weights adding up to 1.
    assert page.text_content("#voice-spec") == "jm_kumo(0.8)+jf_gongitsune(0.2)"
    page.click("#speak")
    page.wait_for_function(
        "document.getElementById('status').textContent.startsWith('Done')", timeout=120_000
    )
    # Played while it streamed: playback began with the first chunk, before the end.
    assert page.evaluate("window.kokoroPlayedAt <= window.kokoroDoneAt")
    page.wait_for_function("document.getElementById('player').readyState >= 2", timeout=20_000)
    duration = page.eval_on_selector("#player", "p => p.duration")
    assert 1.0 < duration < 5.0
    page.eval_on_selector("#player", "p => { p.muted = true; p.currentTime = 0; return p.play(); }")
    page.wait_for_function("document.getElementById('player').currentTime > 0.2", timeout=20_000)
    assert page.get_attribute("#download", "download") == "speech.mp3"
    page.eval_on_selector("#player", "p => p.pause()")

    # What the page plays is what the judge hears.
    encoded = page.evaluate(
        """async () => {
            const link = document.getElementById('download').href;
            const data = await (await fetch(link)).arrayBuffer();
            let text = '';
            for (const byte of new Uint8Array(data)) text += String.fromCharCode(byte);
            return btoa(text);
        }"""
    )
    listener.check_later(TEXT, decode(base64.b64decode(encoded), "mp3"))
    assert spoken_as == ["jm_kumo(0.8)+jf_gongitsune(0.2)"]

    # An error takes the old audio and its link away: they belong to other text.
    page.fill("#text", "\U0001f642 \U0001f642")
    page.click("#speak")
    page.wait_for_selector("#status.error")
    assert "nothing to speak" in page.text_content("#status")
    assert page.is_hidden("#download")
    assert page.get_attribute("#download", "href") is None
    assert page.eval_on_selector("#player", "p => p.getAttribute('src')") is None
    assert elsewhere == [] and failed == []


@pytest.mark.model
def test_the_page_asks_for_the_key_when_one_is_set(page) -> None:
    with http_server("--api-key", "page-key") as locked:
        base = http_base(locked)
        page.goto(base + "/")
        page.wait_for_selector("#key-label:not([hidden])")
        assert "API key" in page.text_content("#status")
        assert page.eval_on_selector("#voice", "s => s.options.length") == 0
        page.fill("#key", "wrong-key")
        page.press("#key", "Tab")
        page.wait_for_function("document.getElementById('status').textContent.includes('wrong')")
        # The voices are listed as soon as the key is given, before anything is spoken.
        page.fill("#key", "page-key")
        page.press("#key", "Tab")
        page.wait_for_function("document.getElementById('voice').options.length >= 5")
        assert page.input_value("#voice") == "jm_kumo"
        assert "API key" not in page.text_content("#status")
        page.fill("#text", "Hi.")
        page.select_option("#format", "wav")
        page.click("#speak")
        page.wait_for_function(
            "document.getElementById('status').textContent.startsWith('Done')", timeout=120_000
        )
        assert page.eval_on_selector("#voice", "s => s.options.length") >= 5


def test_the_page_and_its_script_use_relative_urls_only() -> None:
    """The fast tier's guard for the panel's test (test_http_page_panel.py): no URL in
    the page or its script starts at the server's root (or names another host)."""
    from html.parser import HTMLParser
    from importlib import resources

    static = resources.files("wyoming_kokoro.server.http").joinpath("static")
    urls: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            urls.extend(value or "" for name, value in attrs if name in ("src", "href"))

    Links().feed(static.joinpath("index.html").read_text())
    assert urls and all(not url.startswith("/") and "//" not in url.split(",")[0] for url in urls)
    assert any(url.startswith("data:") for url in urls)  # the icon
    script = static.joinpath("page.js").read_text()
    fetched = re.findall(r"""fetch\(\s*["'`]([^"'`]*)""", script)
    assert fetched and all(not url.startswith("/") and "//" not in url for url in fetched)
