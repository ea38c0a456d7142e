"""The page as Home Assistant's panel shows it, in a real headless browser: the
server's ingress listener (no --http, no key asked) behind a prefix-stripping proxy,
framed by Home Assistant's own page. Nothing is asked for outside the prefix; a
preset saved on the page is listed by the next Wyoming describe; a pronunciation
saved on the page is heard in the next answer.

One server for the module; KOKORO_PAGE_SCREENSHOTS=DIR keeps the page's pictures
(light, dark, phone width) there, as docs/ shows them.
"""

from __future__ import annotations

import base64
import os
import re
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from support.browser import chromium_page
from support.http_client import decode
from support.ingress_proxy import PANEL, IngressProxy
from support.server_process import ServerProcess
from support.wyoming_io import run, voice_names

pytestmark = pytest.mark.model

INGRESS = re.compile(r"Ingress page on http://127\.0\.0\.1:(\d+)/ \(for 127\.0\.0\.1 only\)")
# A made-up word said as a real one: only the saved pronunciation makes it heard so.
SAID = "I would like a zorblatt, please."
HEARD = "I would like a pineapple, please."
MINE = "# Mine, by hand.\nslow:\n  voice: jm_kumo\n  speed: 0.8\n"
# The page's audio (a blob: URL) as base64, fetched inside the page.
FETCHED = """async (url) => {
    const data = new Uint8Array(await (await fetch(url)).arrayBuffer());
    let text = '';
    for (const byte of data) text += String.fromCharCode(byte);
    return btoa(text);
}"""


def described(uri: str) -> list[str]:
    """The voices a Wyoming describe lists, asked from a thread of its own (Playwright's
    synchronous API holds this thread's event loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: run(voice_names(uri))).result(timeout=30)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    (folder / "presets.yaml").write_text(MINE)
    return folder


@pytest.fixture(scope="module")
def server(data_dir: Path) -> Iterator[ServerProcess]:
    # A key that the panel never needs: Home Assistant has logged its user in.
    with ServerProcess(
        *["--ingress", "tcp://127.0.0.1:0", "--ingress-peer", "127.0.0.1"],
        *["--api-key", "never-asked", "--data-dir", str(data_dir), "--idle-timeout", "120"],
    ) as running:
        yield running


def ingress_port(server: ServerProcess) -> int:
    ports = [m.group(1) for line in server.log if (m := INGRESS.search(line))]
    assert ports, "no ingress line in the log:\n" + "".join(server.log)
    return int(ports[0])


@pytest.fixture(scope="module")
def proxy(server: ServerProcess) -> Iterator[IngressProxy]:
    port = ingress_port(server)
    assert not any("HTTP API on" in line for line in server.log)  # no --http: no API port
    with IngressProxy(f"http://127.0.0.1:{port}") as running:
        yield running


def test_an_idle_proxy_connection_is_let_go_soon(server: ServerProcess) -> None:
    # The add-on restarts the server for the voice pack only when no connection is
    # open: a connection the Supervisor's proxy keeps after the panel's last request
    # must not hold that off for the whole --connection-timeout.
    with socket.create_connection(("127.0.0.1", ingress_port(server)), timeout=60) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: panel\r\n\r\n")
        since = time.monotonic()
        received = b""
        while chunk := sock.recv(65536):  # the answer, then the server's close
            received += chunk
        idle = time.monotonic() - since
    assert received.startswith(b"HTTP/1.1 200"), received[:200]
    assert b"connection: close" not in received.lower()  # kept, then let go when idle
    assert idle < 30, f"closed after {idle:.0f} s"


def test_the_panel_saves_a_preset_and_a_pronunciation_that_are_used_at_once(
    server: ServerProcess, proxy: IngressProxy, data_dir: Path, listener, tmp_path: Path
) -> None:
    asked: list[str] = []
    failed: list[str] = []
    with chromium_page(tmp_path / "profile") as page:
        page.on("request", lambda r: asked.append(r.url))
        refused = proxy.base + "v1/presets/jm_kumo"  # the refusal this test asks for
        page.on(
            "response",
            lambda r: r.status >= 400 and r.url != refused and failed.append(f"{r.status} {r.url}"),
        )
        page.goto(proxy.panel)
        panel = page.wait_for_selector("iframe").content_frame()
        panel.wait_for_function("document.getElementById('voice').options.length >= 5")
        assert panel.is_hidden("#key-label")  # no key asked through the panel
        assert panel.text_content("#preset-list").startswith("slow: jm_kumo, speed 0.8")

        # A blend of three, from the sliders: the main voice keeps what the others leave.
        panel.select_option("#voice", "jm_kumo")
        panel.select_option("#blend", "jf_alpha")
        panel.fill("#share", "30")
        panel.dispatch_event("#share", "input")
        panel.click("#add-blend")
        panel.select_option("#blends .blend:nth-child(2) .blend-voice", "jf_nezumi")
        assert panel.text_content("#voice-spec") == "jm_kumo(0.5)+jf_alpha(0.3)+jf_nezumi(0.2)"
        panel.fill("#speed", "0.9")
        panel.dispatch_event("#speed", "input")
        panel.fill("#preset-name", "evening")
        panel.fill("#preset-description", "Kumo with Alpha and Nezumi")
        panel.click("#save-preset")
        panel.wait_for_selector("#preset-status:text-matches('^Saved evening')")
        # Home Assistant's next look at the voices lists it.
        assert "evening" in described(server.uri)
        saved = yaml.safe_load((data_dir / "presets.yaml").read_text())
        assert saved["evening"] == {
            "voice": "jm_kumo(0.5)+jf_alpha(0.3)+jf_nezumi(0.2)",
            "speed": 0.9,
            "volume": 1,
            "description": "Kumo with Alpha and Nezumi",
        }
        assert (data_dir / "presets.yaml").read_text().startswith("# Mine, by hand.\nslow:\n")
        panel.wait_for_function("document.getElementById('preset-list').children.length === 2")

        # A refusal is the file reader's, in plain words.
        panel.fill("#preset-name", "jm_kumo")
        panel.click("#save-preset")
        panel.wait_for_selector("#preset-status.error")
        assert panel.text_content("#preset-status") == (
            "a voice of that name is installed; pick another name"
        )

        panel.fill("#lexicon-word", "Zorblatt")
        panel.fill("#lexicon-said", "pineapple")
        panel.click("#save-word")
        panel.wait_for_selector("#lexicon-status:text-matches('^Saved')")
        panel.wait_for_selector("#lexicon-table td:text-is('zorblatt')")
        assert "Zorblatt\tpineapple\n" in (data_dir / "lexicon.txt").read_text()

        # The next answer says it so: the worker that starts now reads the new lexicon.
        panel.select_option("#voice", "jm_kumo")
        panel.select_option("#blend", "")
        panel.select_option("#blends .blend:nth-child(2) .blend-voice", "")
        panel.fill("#speed", "1")
        panel.dispatch_event("#speed", "input")
        panel.fill("#text", SAID)
        panel.select_option("#format", "wav")
        panel.click("#speak")
        panel.wait_for_function(
            "document.getElementById('status').textContent.startsWith('Done')", timeout=120_000
        )
        played = panel.eval_on_selector("#player", "p => p.src")
        encoded = panel.evaluate(FETCHED, played)
        listener.check_later(HEARD, decode(base64.b64decode(encoded), "wav"))

        # "Say it" in the word's row speaks the word alone, as saved.
        panel.click("#lexicon-table tr:has(td:text-is('zorblatt')) .say-it")
        panel.wait_for_selector("#lexicon-status:text-matches('^Done')", timeout=120_000)
        said = panel.evaluate(FETCHED, panel.eval_on_selector("#player", "p => p.src"))
        word = decode(base64.b64decode(said), "wav")
        listener.check_later("pineapple", word, heard_as="pineapple", unheard="zorb")
        pictures(page, proxy)
    inside = (proxy.base, proxy.panel, "blob:", "data:")
    assert [url for url in asked if not url.startswith(inside)] == []
    assert failed == []
    outside = [path for path in proxy.paths if not path.startswith(proxy.prefix + "/")]
    assert outside == [PANEL], outside


def pictures(page, proxy: IngressProxy) -> None:
    """The page light, dark and at a phone's width (KOKORO_PAGE_SCREENSHOTS=DIR)."""
    folder = os.environ.get("KOKORO_PAGE_SCREENSHOTS")
    if not folder:
        return
    page.goto(proxy.base)
    page.wait_for_function("document.getElementById('lexicon-table').tBodies[0].rows.length")
    for scheme, name, width in (
        ("light", "http-page.png", 900),
        ("dark", "http-page-dark.png", 900),
        ("light", "http-page-phone.png", 390),
    ):
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size({"width": width, "height": 844})
        page.screenshot(path=str(Path(folder) / name), full_page=True)
