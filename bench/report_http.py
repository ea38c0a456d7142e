"""Markdown for scenarios H1-H2 (the HTTP side)."""

from __future__ import annotations

from typing import Any

from fmt import num, table

Record = dict[str, Any]


def http_sections(records: dict[str, Record]) -> list[str]:
    out: list[str] = []
    if "http_first_byte" in records:
        result = records["http_first_byte"]["result"]
        rows = [
            [
                label,
                num(r["wyoming_first_audio"], 2),
                num(r["http_pcm_first_byte"], 2),
                num(r["http_mp3_first_byte"], 2),
                num(r["pcm_ratio"], 2),
                num(r["mp3_ratio"], 2),
            ]
            for label, r in result.items()
        ]
        head = ["text", "Wyoming first audio (s)", "HTTP pcm first byte", "HTTP mp3 first byte"]
        out += [
            "#### H1. First byte over HTTP vs first audio over Wyoming (warm worker)\n",
            table([*head, "pcm / Wyoming", "mp3 / Wyoming"], rows),
        ]
    if "http_memory" in records:
        r = records["http_memory"]["result"]
        out += [
            "#### H2. Idle server RSS (MB, no worker running)\n",
            table(
                ["without --http", "with --http", "--http adds", "after mp3/opus/aac/flac"],
                [
                    [num(r[k], 1) for k in ("without_http", "with_http", "http_adds")]
                    + [num(r["after_all_formats"], 1)]
                ],
            ),
        ]
    return out
