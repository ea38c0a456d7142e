"""Saving presets and pronunciations from the page: `PUT`/`DELETE /v1/presets/{name}`,
`GET`/`PUT`/`DELETE /v1/lexicon`.

They change the first data dir's presets.yaml and lexicon.txt (the reader's checks,
atomic, the user's other lines kept), then have the data dirs read again at once:
the next request speaks with the change, and Home Assistant's next describe lists a
new preset. Allowed on the ingress listener (Home Assistant has logged its user in)
and, elsewhere, only behind an API key: without one anybody on the network could
change what the server says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from wyoming_kokoro.catalog.file_edit import EditError
from wyoming_kokoro.catalog.presets_writing import remove_preset, save_preset
from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.speech import SPEECH_CONFIG, read_body, require_json
from wyoming_kokoro.text.g2p import LEXICON_NAME
from wyoming_kokoro.text.g2p.lexicon_writing import read_entries, remove_entry, save_entry

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Editing:
    """Where saves go and how the server takes them up."""

    data_dirs: tuple[Path, ...]  # saves go to the first; the first wins a name
    reread: Callable[[], Awaitable[None]]  # the data dirs read again, waited for


EDITING: web.AppKey[Editing] = web.AppKey("editing", Editing)
# Whether this listener may save: the ingress one, or one with an API key.
WRITES: web.AppKey[bool] = web.AppKey("writes", bool)

# A preset or word the page lists that comes from a file the user keeps elsewhere.
_ELSEWHERE = "{} is in the {} of another data folder (one you keep yourself): change it there"
NO_WRITES = (
    "saving presets and pronunciations over HTTP needs an API key (--api-key); "
    "the page in Home Assistant's panel needs none"
)


def add_routes(app: web.Application, editing: Editing, writes: bool) -> None:
    app[EDITING] = editing
    app[WRITES] = writes
    app.router.add_put("/v1/presets/{name:.+}", put_preset)
    app.router.add_delete("/v1/presets/{name:.+}", delete_preset)
    app.router.add_get("/v1/lexicon", get_lexicon)
    app.router.add_put("/v1/lexicon", put_lexicon)
    app.router.add_delete("/v1/lexicon", delete_lexicon)


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.app[WRITES]:
        raise ApiError(403, NO_WRITES, code="read_only")
    require_json(request)
    body = await read_body(request, request.app[SPEECH_CONFIG].read_timeout)
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", code="invalid_type")
    return body


def _first_dir(request: web.Request) -> Path:
    return request.app[EDITING].data_dirs[0]


async def _write(request: web.Request, what: str, action: Callable[[], Any]) -> Any:
    """Run a file change in a thread; its refusal as a 400, a file system's as a 500."""
    try:
        result = await asyncio.to_thread(action)
    except EditError as err:
        raise ApiError(400, str(err), code="invalid_value") from None
    except OSError as err:
        _LOGGER.error("Cannot save %s: %s", what, err)
        raise ApiError(
            500, f"cannot save {what}: {err.strerror or err}", code="not_saved"
        ) from None
    await request.app[EDITING].reread()
    return result


async def put_preset(request: web.Request) -> web.Response:
    fields = await _body(request)
    name = request.match_info["name"]
    installed = request.app[SPEECH_CONFIG].voices.current().voice_names
    preset = await _write(
        request, "presets.yaml", lambda: save_preset(_first_dir(request), name, fields, installed)
    )
    _LOGGER.info("Preset %s saved from the page", preset.name)
    return web.json_response({"preset": dataclasses.asdict(preset)})


async def delete_preset(request: web.Request) -> web.Response:
    if not request.app[WRITES]:
        raise ApiError(403, NO_WRITES, code="read_only")
    name = request.match_info["name"]
    offer = request.app[SPEECH_CONFIG].voices.current()
    try:
        await _write(
            request,
            "presets.yaml",
            lambda: remove_preset(_first_dir(request), name, offer.voice_names),
        )
    except ApiError as err:
        if err.status == 400 and name.strip() in offer.presets:
            raise ApiError(400, _ELSEWHERE.format(repr(name.strip()), "presets.yaml")) from None
        raise
    _LOGGER.info("Preset %s removed from the page", name.strip())
    return web.json_response({"deleted": name.strip()})


async def get_lexicon(request: web.Request) -> web.Response:
    dirs = request.app[EDITING].data_dirs

    def read() -> list[dict[str, object]]:
        mine = read_entries(dirs[0] / LEXICON_NAME)
        merged: dict[str, str] = {}
        for directory in reversed(dirs):  # the first dir wins, as the reader merges
            merged.update(read_entries(directory / LEXICON_NAME))
        return [
            {"word": word, "pronunciation": said, "editable": mine.get(word) == said}
            for word, said in sorted(merged.items())
        ]

    return web.json_response({"entries": await asyncio.to_thread(read)})


def _text_field(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' (a string) is required", param=key, code="invalid_type")
    return value


async def put_lexicon(request: web.Request) -> web.Response:
    body = await _body(request)
    word, said = _text_field(body, "word"), _text_field(body, "pronunciation")
    entry = await _write(request, LEXICON_NAME, lambda: save_entry(_first_dir(request), word, said))
    _LOGGER.info("Pronunciation of %r saved from the page", entry[0])
    return web.json_response({"word": entry[0], "pronunciation": entry[1]})


async def delete_lexicon(request: web.Request) -> web.Response:
    body = await _body(request)
    word = _text_field(body, "word")
    try:
        await _write(request, LEXICON_NAME, lambda: remove_entry(_first_dir(request), word))
    except ApiError as err:
        key = word.strip().lower()
        if err.status == 400 and await asyncio.to_thread(_elsewhere, request, key):
            raise ApiError(400, _ELSEWHERE.format(repr(key), LEXICON_NAME)) from None
        raise
    _LOGGER.info("Pronunciation of %r removed from the page", word.strip().lower())
    return web.json_response({"deleted": word.strip().lower()})


def _elsewhere(request: web.Request, word: str) -> bool:
    """Whether a data dir after the first has `word` in its lexicon."""
    others = request.app[EDITING].data_dirs[1:]
    return any(word in read_entries(directory / LEXICON_NAME) for directory in others)
