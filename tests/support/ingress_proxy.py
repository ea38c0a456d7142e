"""A prefix-stripping reverse proxy, as Home Assistant's ingress is: the page lives
under `/api/hassio_ingress/TOKEN/`, and the server sees paths without that prefix.

Runs aiohttp on 127.0.0.1 in a thread of its own (the browser tests drive
Playwright's synchronous API in the main thread). Every path the browser asks for
is kept, so a test can tell whether one left the prefix. `proxy.panel` is Home
Assistant's own page around it: the ingress page in a frame, from the same origin.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

from aiohttp import ClientSession, web

# Per-connection headers a proxy does not pass on (RFC 9110), and what the proxy
# recomputes for the body it sends.
_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "host",
    "content-length",
}


PANEL = "/kokoro_panel"
# The panel as Home Assistant shows it: its page, the app's page in a frame filling it
# (an icon of its own: the browser asks no /favicon.ico outside the prefix for it).
_PANEL_PAGE = """<!doctype html>
<html><head><title>Home Assistant</title><link rel="icon" href="data:,"><style>
html, body {{ margin: 0; height: 100%; }}
iframe {{ border: 0; width: 100%; height: 100%; display: block; }}
</style></head><body>{frame}</body></html>
"""


class IngressProxy:
    """`with IngressProxy(upstream) as proxy:` serves `proxy.base` (ends with "/")."""

    def __init__(self, upstream: str, token: str = "c0ffee42") -> None:
        self.upstream = upstream.rstrip("/")
        self.prefix = f"/api/hassio_ingress/{token}"
        self.paths: list[str] = []  # every path asked for, the prefix included
        self.base = ""
        self.panel = ""  # Home Assistant's page that frames the ingress page
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None

    def __enter__(self) -> IngressProxy:
        self._thread.start()
        port = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        self.base = f"http://127.0.0.1:{port}{self.prefix}/"
        self.panel = f"http://127.0.0.1:{port}{PANEL}"
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _start(self) -> int:
        self._session = ClientSession(auto_decompress=False)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return self._runner.addresses[0][1]

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path)
        if request.path == PANEL:
            frame = f'<iframe src="{self.prefix}/" title="Kokoro"></iframe>'
            return web.Response(text=_PANEL_PAGE.format(frame=frame), content_type="text/html")
        if not request.path.startswith(self.prefix + "/"):
            return web.Response(status=404, text="outside the ingress prefix")
        assert self._session is not None
        tail = request.raw_path[len(self.prefix) :]
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        headers["X-Ingress-Path"] = self.prefix
        async with self._session.request(
            request.method,
            self.upstream + tail,
            headers=headers,
            data=await request.read(),
            allow_redirects=False,
        ) as answer:
            response = web.StreamResponse(
                status=answer.status,
                headers={k: v for k, v in answer.headers.items() if k.lower() not in _HOP},
            )
            await response.prepare(request)
            # Passed on as it comes: the page plays mp3 while it streams.
            async for chunk in answer.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response
