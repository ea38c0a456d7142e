"""Saving presets and pronunciations over HTTP, in process on a real socket: allowed on
the ingress listener (Home Assistant's panel, its one peer) and behind an API key,
refused in plain words otherwise; what is saved is read again at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.catalog.presets_file import PRESETS_FILE, load_presets
from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.editing import Editing
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import SpeechConfig
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.settings import SpeechSettings
from wyoming_kokoro.text.g2p import LEXICON_NAME, load_lexicons

KEY = "s3cret-token"
INSTALLED = ("jm_kumo", "jf_alpha")
JSON = {"Content-Type": "application/json"}
AUTH = {**JSON, "Authorization": f"Bearer {KEY}"}
WORD = json.dumps({"word": "a", "pronunciation": "b"})

Talk = Callable[[TestClient], Awaitable[Any]]


def served(
    tmp_path: Path,
    talk: Talk,
    api_key: str | None = None,
    peer: str | None = None,
    presets: dict[str, Preset] | None = None,
) -> tuple[Any, int]:
    """`talk` with the app (a key, or the ingress listener for `peer`); and how many
    times the data dirs were read again."""
    rereads = 0

    async def reread() -> None:
        nonlocal rereads
        rereads += 1

    async def main() -> Any:
        config = SpeechConfig(
            scheduler=None,  # type: ignore[arg-type]  # nothing is spoken here
            voices=Voices(
                INSTALLED,
                "jm_kumo",
                1.0,
                1000,
                offer=Offer(INSTALLED, presets or {}, "jm_kumo", False),
            ),
            next_client_id=lambda: 1,
            max_streams=1,
            write_timeout=5.0,
            read_timeout=5.0,
        )
        editing = Editing((tmp_path / "first", tmp_path / "second"), reread)
        size = SpeechSettings().max_text_json_bytes
        app = build_app(config, api_key, (), size, editing, ingress_peer=peer)
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            return await talk(client)

    return asyncio.run(main()), rereads


async def answer(reply: Any) -> tuple[int, Any]:
    return reply.status, json.loads(await reply.read())


def test_without_a_key_the_api_saves_nothing_and_says_why(tmp_path: Path) -> None:
    async def talk(client: TestClient) -> list[tuple[int, Any]]:
        body = json.dumps({"voice": "jm_kumo"})
        return [
            await answer(await client.put("/v1/presets/slow", data=body, headers=JSON)),
            await answer(await client.delete("/v1/presets/slow")),
            await answer(await client.put("/v1/lexicon", data=WORD, headers=JSON)),
            await answer(await client.get("/v1/lexicon")),
        ]

    (put, delete, lexicon, listed), rereads = served(tmp_path, talk)
    for status, body in (put, delete, lexicon):
        assert status == 403
        assert "needs an API key" in body["error"]["message"]
        assert body["error"]["type"] == "permission_error"  # OpenAI's type for a 403
    assert listed == (200, {"entries": []})  # reading is as open as the voice list
    assert rereads == 0 and not (tmp_path / "first").exists()


def test_with_the_key_a_preset_is_saved_read_again_and_removed(tmp_path: Path) -> None:
    async def talk(client: TestClient) -> list[tuple[int, Any]]:
        fields = json.dumps({"voice": "jm_kumo(2)+jf_alpha(1)", "speed": 0.8})
        return [
            await answer(await client.put("/v1/presets/slow", data=fields, headers=JSON)),
            await answer(await client.put("/v1/presets/slow", data=fields, headers=AUTH)),
        ]

    (unkeyed, saved), rereads = served(tmp_path, talk, api_key=KEY)
    assert unkeyed[0] == 401
    assert saved[0] == 200
    assert saved[1]["preset"]["voice"] == "jm_kumo(0.6666666666666666)+jf_alpha(0.3333333333333333)"
    assert load_presets([tmp_path / "first"], INSTALLED)["slow"].speed == 0.8
    assert rereads == 1

    async def remove(client: TestClient) -> tuple[int, Any]:
        return await answer(await client.delete("/v1/presets/slow", headers=AUTH))

    assert served(tmp_path, remove, api_key=KEY)[0] == (200, {"deleted": "slow"})
    assert load_presets([tmp_path / "first"], INSTALLED) == {}


def test_a_refusal_is_the_readers_and_names_no_path(tmp_path: Path) -> None:
    async def talk(client: TestClient) -> list[tuple[int, Any]]:
        async def put(name: str, fields: Any) -> tuple[int, Any]:
            body = json.dumps(fields)
            return await answer(await client.put(f"/v1/presets/{name}", data=body, headers=JSON))

        return [
            await put("jm_kumo", {"voice": "jm_kumo"}),
            await put("fast", {"voice": "jm_kumo", "speed": 3}),
            await put("fast", {"voice": "af_nobody"}),
            await put("fast", {"voice": "jm_kumo", "colour": "red"}),
            await put("fast", ["not", "an", "object"]),
            await answer(await client.delete("/v1/presets/never")),
        ]

    answers, rereads = served(tmp_path, talk, peer="127.0.0.1")
    messages = [body["error"]["message"] for _, body in answers]
    assert [status for status, _ in answers] == [400] * 6
    assert messages[0] == "a voice of that name is installed; pick another name"
    assert messages[1] == "speed must be 0.5-2, got 3"
    assert "af_nobody" in messages[2]
    assert messages[3].startswith("unknown field 'colour'")
    assert messages[4] == "the body must be a JSON object"
    assert messages[5] == "no preset 'never' in the presets saved here"
    assert all(str(tmp_path) not in message for message in messages)
    assert rereads == 0


def test_the_ingress_listener_saves_without_a_key_for_its_peer_only(tmp_path: Path) -> None:
    async def talk(client: TestClient) -> list[tuple[int, Any]]:
        word = json.dumps({"word": "Zorblatt", "pronunciation": "pineapple"})
        return [
            await answer(await client.put("/v1/lexicon", data=word, headers=JSON)),
            await answer(await client.get("/v1/lexicon")),
        ]

    (saved, listed), rereads = served(tmp_path, talk, peer="127.0.0.1")
    assert saved == (200, {"word": "zorblatt", "pronunciation": "pineapple"})
    assert listed[1]["entries"] == [
        {"word": "zorblatt", "pronunciation": "pineapple", "editable": True}
    ]
    assert load_lexicons([tmp_path / "first"]) == {"zorblatt": "pineapple"}
    assert rereads == 1

    async def stranger(client: TestClient) -> list[tuple[int, Any]]:
        return [
            await answer(await client.get("/v1/lexicon")),
            await answer(await client.get("/health")),
        ]

    (lexicon, health), _ = served(tmp_path, stranger, peer="172.30.32.2")
    assert lexicon[0] == health[0] == 403
    assert health[1]["error"]["message"] == "this port serves Home Assistant's panel only"


def test_a_word_in_another_data_dir_is_listed_but_not_removable(tmp_path: Path) -> None:
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / LEXICON_NAME).write_text("HA home assistant\n", encoding="utf-8")

    async def talk(client: TestClient) -> list[tuple[int, Any]]:
        body = json.dumps({"word": "ha"})
        return [
            await answer(await client.get("/v1/lexicon")),
            await answer(await client.delete("/v1/lexicon", data=body, headers=JSON)),
        ]

    (listed, removed), _ = served(tmp_path, talk, peer="127.0.0.1")
    assert listed[1]["entries"] == [
        {"word": "ha", "pronunciation": "home assistant", "editable": False}
    ]
    assert removed[0] == 400
    assert removed[1]["error"]["message"] == (
        "'ha' is in the lexicon.txt of another data folder (one you keep yourself): change it there"
    )


def test_the_panel_may_frame_the_page_and_nobody_else_may(tmp_path: Path) -> None:
    async def page(client: TestClient) -> str:
        reply = await client.get("/")
        assert reply.status == 200
        return reply.headers["Content-Security-Policy"]

    assert "frame-ancestors 'self'" in served(tmp_path, page, peer="127.0.0.1")[0]
    assert "frame-ancestors 'none'" in served(tmp_path, page)[0]


def test_a_save_that_the_file_system_refuses_is_a_plain_500(tmp_path: Path) -> None:
    (tmp_path / "first").write_text("a file where the folder should be", encoding="utf-8")

    async def talk(client: TestClient) -> tuple[int, Any]:
        body = json.dumps({"voice": "jm_kumo"})
        return await answer(await client.put("/v1/presets/slow", data=body, headers=JSON))

    (status, body), rereads = served(tmp_path, talk, peer="127.0.0.1")
    assert status == 500
    assert body["error"]["message"].startswith("cannot save presets.yaml: ")
    assert str(tmp_path) not in body["error"]["message"]
    assert rereads == 0
    assert not (tmp_path / PRESETS_FILE).exists()


def test_a_preset_of_another_data_dir_is_not_removed_and_the_answer_says_where(
    tmp_path: Path,
) -> None:
    theirs = {"kept": Preset("kept", "jm_kumo", speed=0.8)}  # from the second dir's file

    async def talk(client: TestClient) -> tuple[int, Any]:
        return await answer(await client.delete("/v1/presets/kept"))

    (status, body), rereads = served(tmp_path, talk, peer="127.0.0.1", presets=theirs)
    assert status == 400 and rereads == 0
    assert body["error"]["message"] == (
        "'kept' is in the presets.yaml of another data folder (one you keep yourself): "
        "change it there"
    )


def test_the_voice_list_shows_what_a_preset_sets_and_null_for_the_rest(tmp_path: Path) -> None:
    slow = Preset(
        "slow",
        "jm_kumo",
        0.8,
        language="ja",
        sentence_pause=500,
        paragraph_pause=1200,
        lead_silence=400,
    )

    async def talk(client: TestClient) -> tuple[int, Any]:
        return await answer(await client.get("/v1/audio/voices"))

    (status, listed), _ = served(tmp_path, talk, presets={"slow": slow})
    assert status == 200
    (entry,) = [v for v in listed["voices"] if v["id"] == "slow"]
    assert entry["preset"] == {
        "voice": "jm_kumo",
        "speed": 0.8,
        "volume": 1.0,
        "language": "ja",
        "sentence_pause": 500,
        "paragraph_pause": 1200,
        "lead_silence": 400,
        "tail_silence": None,
    }
