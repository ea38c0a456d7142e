"""The bearer token, in process: the scheme is matched as RFC 7235 says (any case,
spaces after it), the token exactly, and anything else is a 401."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import SpeechConfig
from wyoming_kokoro.settings import SpeechSettings

KEY = "s3cret-token"


def statuses(headers: list[str]) -> list[int]:
    """GET /v1/models with each Authorization header in turn, on a real socket."""

    async def main() -> list[int]:
        config = SpeechConfig(
            scheduler=None,  # type: ignore[arg-type]  # /v1/models speaks nothing
            voices=Voices(("jm_kumo",), "jm_kumo", 1.0, 1000),
            next_client_id=lambda: 1,
            max_streams=1,
            write_timeout=5.0,
            read_timeout=5.0,
        )
        app = build_app(config, KEY, (), SpeechSettings().max_text_json_bytes)
        found = []
        async with TestClient(TestServer(app)) as client:
            for header in headers:
                reply = await client.get("/v1/models", headers={"Authorization": header})
                found.append(reply.status)
        return found

    return asyncio.run(main())


# The scheme in any case (RFC 7235: case-insensitive), then one or more spaces or tabs
_SCHEME = st.tuples(*(st.sampled_from([c, c.upper()]) for c in "bearer")).map("".join)
_GAP = st.text(alphabet=" \t", min_size=1, max_size=4).filter(lambda gap: gap[0] == " ")


@settings(max_examples=20, deadline=None)
@given(scheme=_SCHEME, gap=_GAP)
def test_the_scheme_is_case_insensitive_and_spaces_after_it_are_tolerated(
    scheme: str, gap: str
) -> None:
    assert statuses([f"{scheme}{gap}{KEY}", f"{scheme}{gap}{KEY}x"]) == [200, 401]


def test_anything_but_the_bearer_scheme_and_the_key_is_refused() -> None:
    refused = [
        "",
        KEY,
        f"Basic {KEY}",
        f"Bearer{KEY}",
        f"Bearerx {KEY}",
        f"Bearer {KEY[:-1]}",
        f"Bearer {KEY} {KEY}",
        "Bearer ",
    ]
    assert statuses(refused) == [401] * len(refused)
