"""The aiohttp application: routes, bearer token, CORS, and the page at `/`."""

from __future__ import annotations

import hmac
import ipaddress
import re
import time
from importlib import resources

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from wyoming_kokoro import __version__
from wyoming_kokoro.catalog.voices import describe_voice
from wyoming_kokoro.server.http.connections import room_middleware
from wyoming_kokoro.server.http.editing import Editing, add_routes
from wyoming_kokoro.server.http.errors import ApiError, error_middleware
from wyoming_kokoro.server.http.request import MODELS
from wyoming_kokoro.server.http.speech import (
    ACTIVE_STREAMS,
    SPEECH_CONFIG,
    SpeechConfig,
    captioned_speech,
    speech,
)
from wyoming_kokoro.server.http.voicemap import voice_map

# Routes anyone may read: the page has no data of its own, and a health check
# (Docker, a proxy) has no token.
_PUBLIC = ("/", "/health", "/static/")
_STARTED = int(time.time())
# Header names (RFC 9110 tokens) separated by commas
_HEADER_NAMES = re.compile(r"[\w!#$%&'*+.^`|~-]+(?:\s*,\s*[\w!#$%&'*+.^`|~-]+)*", re.ASCII)
_STATIC = {
    "page.js": "text/javascript",
    "page.css": "text/css",
}
# The page loads nothing from elsewhere; audio plays from blob: URLs it makes.
# Home Assistant shows the ingress page in a frame of its own page (same origin).
_CSP = (
    "default-src 'self'; media-src 'self' blob:; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors {}"
)


def _page_headers(framed: bool) -> dict[str, str]:
    return {
        "Content-Security-Policy": _CSP.format("'self'" if framed else "'none'"),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


PAGE_HEADERS: web.AppKey[dict[str, str]] = web.AppKey("page_headers", dict)


def _auth_middleware(api_key: str | None) -> Middleware:
    expected = api_key.encode() if api_key else None

    @web.middleware
    async def auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        if expected is None or request.method == "OPTIONS" or _is_public(request.path):
            return await handler(request)
        # surrogateescape: aiohttp keeps undecodable header bytes as surrogates
        given = request.headers.get("Authorization", "").encode("utf-8", "surrogateescape")
        # Constant time: the comparison must not tell how much of a guess was right.
        if not hmac.compare_digest(_bearer_token(given), expected):
            raise ApiError(401, "missing or wrong API key (Authorization: Bearer …)", code=None)
        return await handler(request)

    return auth


def _bearer_token(credentials: bytes) -> bytes:
    """The token of `Bearer TOKEN`; b"" for any other scheme. The scheme's case does
    not matter (RFC 7235), and clients that put more than one space after it are met."""
    scheme, space, token = credentials.partition(b" ")
    if not space or scheme.lower() != b"bearer":
        return b""
    return token.lstrip(b" \t")


def _peer_middleware(peer: str) -> Middleware:
    """Only `peer` (the Supervisor, which proxies Home Assistant's panel) is served:
    this listener asks no API key."""
    try:
        allowed = ipaddress.ip_address(peer)
    except ValueError:
        raise ValueError(f"--ingress-peer {peer!r}: not an IP address") from None

    @web.middleware
    async def only_peer(request: web.Request, handler: Handler) -> web.StreamResponse:
        if _address(request.remote) != allowed:
            raise ApiError(403, "this port serves Home Assistant's panel only", code="forbidden")
        return await handler(request)

    return only_peer


def _address(remote: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(remote or "")
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_public(path: str) -> bool:
    return path in _PUBLIC or path.startswith("/static/")


def _cors_headers(request: web.Request, allowed: frozenset[str]) -> dict[str, str]:
    origin = request.headers.get("Origin")
    if origin is None or not (origin in allowed or "*" in allowed):
        return {}
    return {"Access-Control-Allow-Origin": "*" if "*" in allowed else origin, "Vary": "Origin"}


def _allowed_headers(request: web.Request) -> str:
    """The headers the preflight asks for, if they are a list of header names.

    Clients add their own (OpenAI's JavaScript client sends x-stainless-*): a
    fixed list failed them, and the origin is trusted already.
    """
    asked = request.headers.get("Access-Control-Request-Headers", "").strip()
    return asked if _HEADER_NAMES.fullmatch(asked) else "Authorization, Content-Type"


def _enable_cors(app: web.Application, origins: tuple[str, ...]) -> None:
    """Preflights answered; every response, streamed ones too, carries the headers."""
    allowed = frozenset(origins)

    @web.middleware
    async def preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        headers = _cors_headers(request, allowed)
        if headers and request.method == "OPTIONS":
            headers |= {
                "Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS",
                "Access-Control-Allow-Headers": _allowed_headers(request),
                "Access-Control-Max-Age": "600",
                "Vary": "Origin, Access-Control-Request-Headers",
            }
            return web.Response(status=204, headers=headers)
        return await handler(request)

    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        # A signal, not the middleware: a streamed response's headers leave at prepare().
        for name, value in _cors_headers(request, allowed).items():
            response.headers.setdefault(name, value)  # the preflight's Vary stays

    app.middlewares.insert(0, preflight)
    app.on_response_prepare.append(on_prepare)


async def health(request: web.Request) -> web.Response:
    # Only looks: a health check must never load the model.
    scheduler = request.app[SPEECH_CONFIG].scheduler
    worker = "loaded" if scheduler.worker_pid is not None else "unloaded"
    if scheduler.stalled:  # a hung worker is being replaced: requests wait meanwhile
        body = {"status": "stalled", "worker": "hung", "version": __version__}
        return web.json_response(body, status=503)
    return web.json_response({"status": "ok", "worker": worker, "version": __version__})


async def voices(request: web.Request) -> web.Response:
    config = request.app[SPEECH_CONFIG].voices
    offer = config.current()
    await offer.refresh()
    entries: list[dict[str, object]] = []
    for name in offer.voice_names:
        info = describe_voice(name)
        entries.append(
            {
                "id": name,
                "name": info.title,
                "language": info.language.locale,
                "gender": info.gender,
                "grade": info.grade,
            }
        )
    for preset in offer.presets.values():
        entries.append(
            {
                "id": preset.name,
                "name": preset.title,
                "language": preset.locales[0],
                "preset": {
                    "voice": preset.voice,
                    "speed": preset.speed,
                    "volume": preset.volume,
                    "language": preset.language,
                    # milliseconds; null where the server's own option applies
                    "sentence_pause": preset.sentence_pause,
                    "paragraph_pause": preset.paragraph_pause,
                    "lead_silence": preset.lead_silence,
                    "tail_silence": preset.tail_silence,
                },
            }
        )
    return web.json_response(
        {
            "voices": entries,  # the shape Open WebUI reads (id, name)
            "default": offer.default_voice,
            "openai_voices": voice_map(offer.voice_names, offer.default_voice),
        }
    )


def _model(model_id: str) -> dict[str, object]:
    return {"id": model_id, "object": "model", "created": _STARTED, "owned_by": "wyoming-kokoro"}


async def models(_request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [_model(m) for m in MODELS]})


async def audio_models(_request: web.Request) -> web.Response:
    # Open WebUI lists TTS models of an OpenAI-like server from here.
    return web.json_response({"models": [{"id": m, "name": m} for m in MODELS]})


async def page(request: web.Request) -> web.Response:
    body = resources.files(__package__).joinpath("static/index.html").read_bytes()
    headers = request.app[PAGE_HEADERS]
    return web.Response(body=body, content_type="text/html", charset="utf-8", headers=headers)


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _STATIC:
        raise ApiError(404, f"no such file: {name}", code="not_found")
    body = resources.files(__package__).joinpath("static", name).read_bytes()
    return web.Response(body=body, content_type=_STATIC[name], headers=request.app[PAGE_HEADERS])


def build_app(
    config: SpeechConfig,
    api_key: str | None,
    cors_origins: tuple[str, ...],
    max_body: int,
    editing: Editing | None = None,
    ingress_peer: str | None = None,
) -> web.Application:
    """The application; `max_body` covers the longest text accepted, in JSON.

    `ingress_peer`: the listener for Home Assistant's panel, which serves that
    address only, asks no key and may save presets and pronunciations (`editing`).
    """
    if ingress_peer is not None:
        api_key = None  # Home Assistant has logged its user in
    checks = [_peer_middleware(ingress_peer)] if ingress_peer is not None else []
    app = web.Application(
        client_max_size=max_body,
        middlewares=[error_middleware, *checks, room_middleware, _auth_middleware(api_key)],
    )
    if cors_origins:
        _enable_cors(app, cors_origins)
    app[SPEECH_CONFIG] = config
    app[PAGE_HEADERS] = _page_headers(framed=ingress_peer is not None)
    if editing is not None:
        add_routes(app, editing, writes=ingress_peer is not None or api_key is not None)
    app[ACTIVE_STREAMS] = set()  # here: a started application's state is frozen
    app.router.add_post("/v1/audio/speech", speech)
    app.router.add_post("/dev/captioned_speech", captioned_speech)
    app.router.add_get("/v1/audio/voices", voices)
    app.router.add_get("/v1/audio/models", audio_models)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
    return app
