"""Hostile presets files: nesting, tags, size, junk, symlinks. Each costs at most one
warning naming the file, the server keeps serving, and a rescan keeps the last good
presets."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info

from wyoming_kokoro.catalog.presets_file import MAX_PRESETS_BYTES, load_presets, parse_presets

INSTALLED = ("jm_kumo", "jf_alpha")
GOOD = "slow:\n  voice: jm_kumo\n  speed: 0.8\n"
DEEP_FLOW = "a: " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_BLOCK = "".join(" " * i + "k:\n" for i in range(3000)) + " " * 3000 + "v\n"
# A tagged scalar whose text is itself deep YAML: once read back through safe_load
DEEP_TAGGED = 'slow:\n  voice: jm_kumo\n  speed: !!int "' + "[" * 5000 + '"\n'


@pytest.mark.parametrize("text", [DEEP_FLOW, DEEP_BLOCK, DEEP_TAGGED])
def test_deep_nesting_is_one_warning_not_a_recursion_error(
    text: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_presets(text, INSTALLED, "presets.yaml") == {}
    assert len(caplog.records) == 1, [r.getMessage() for r in caplog.records]
    assert caplog.records[0].getMessage().startswith("presets.yaml")


def test_python_tags_and_huge_numbers_are_refused_per_entry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = GOOD + "evil:\n  voice: jm_kumo\n  speed: !!python/object/apply:os.getpid []\n"
    text += "big:\n  voice: jm_kumo\n  speed: !!int " + "9" * 6000 + "\n"
    with caplog.at_level(logging.WARNING):
        presets = parse_presets(text, INSTALLED, "presets.yaml")
    assert list(presets) == ["slow"]
    assert len(caplog.records) == 2


def test_thousands_of_bad_entries_do_not_flood_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "".join(f"p{i}:\n  voice: nope\n" for i in range(5000))
    with caplog.at_level(logging.WARNING):
        assert parse_presets(text, INSTALLED, "presets.yaml") == {}
    assert 1 <= len(caplog.records) <= 12
    assert "more" in caplog.records[-1].getMessage()


def test_junk_oversized_and_special_files_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    junk, big, link, good = (tmp_path / n for n in ("junk", "big", "link", "good"))
    for folder in (junk, big, link, good):
        folder.mkdir()
    (junk / "presets.yaml").write_bytes(os.urandom(4096))
    (big / "presets.yaml").write_text("#" * (MAX_PRESETS_BYTES + 10))
    (link / "presets.yaml").symlink_to("/dev/zero")
    (good / "presets.yaml").write_text(GOOD)
    with caplog.at_level(logging.WARNING):
        presets = load_presets([junk, big, link, good], INSTALLED)
    assert list(presets) == ["slow"]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert str(junk / "presets.yaml") in messages[0]
    assert str(big / "presets.yaml") in messages[1]


async def _describe(uri: str) -> list[str]:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 10)
            assert event is not None, "the server hung up instead of answering describe"
            if Info.is_type(event.type):
                return [v.name for v in Info.from_event(event).tts[0].voices]


def test_a_deep_presets_file_at_start_up_costs_one_warning(tmp_path: Path) -> None:
    presets = tmp_path / "presets.yaml"
    presets.write_text(DEEP_FLOW)
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        names = run(_describe(server.uri))
        assert "jm_kumo" in names
        warnings = [line for line in server.log if str(presets) in line]
        assert len(warnings) == 1, server.log
        assert not any("Traceback" in line for line in server.log)


def test_a_deep_presets_file_on_rescan_keeps_the_last_good_presets(tmp_path: Path) -> None:
    presets = tmp_path / "presets.yaml"
    presets.write_text(GOOD)
    with ServerProcess("--data-dir", str(tmp_path)) as server:
        assert "slow" in run(_describe(server.uri))
        presets.write_text(DEEP_BLOCK)

        def warned() -> list[str]:
            return [line for line in server.log if str(presets) in line and "WARNING" in line]

        # Every describe answers, with the last good presets; the file is read in a
        # thread that a loaded machine may finish after a describe or two.
        for _ in range(3):
            assert "slow" in run(_describe(server.uri))
        assert server.wait_for(lambda: "slow" in run(_describe(server.uri)) and bool(warned()))
        assert len(warned()) == 1, server.log
        assert not any("unexpected failure" in line for line in server.log)
        presets.write_text("quick:\n  voice: jm_kumo\n  speed: 1.3\n")

        def renewed() -> bool:
            names = run(_describe(server.uri))
            return "quick" in names and "slow" not in names

        assert server.wait_for(renewed, 10)
