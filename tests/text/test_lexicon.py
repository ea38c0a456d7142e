"""The user's pronunciation lexicon (lexicon.txt): a bad line or file never stops
the server; it is skipped and logged where the user can find it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from wyoming_kokoro.text.g2p import LEXICON_NAME, load_lexicon, load_lexicons


def lexicon(directory: Path, data: bytes) -> Path:
    path = directory / LEXICON_NAME
    path.write_bytes(data)
    return path


def test_a_bad_line_is_skipped_and_logged_with_its_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = lexicon(tmp_path, "# mine\nzorp  garage door\njustoneword\nKokoro /kˈOkəɹO/\n".encode())
    with caplog.at_level(logging.WARNING):
        entries = load_lexicons([tmp_path])
    assert entries == {"zorp": "garage door", "kokoro": "/kˈOkəɹO/"}
    assert f"{path}:3" in caplog.text and "lexicon.txt:2" not in caplog.text


def test_a_byte_order_mark_does_not_break_the_first_entry(tmp_path: Path) -> None:
    path = lexicon(tmp_path, "\ufeffzorp\tgarage door\r\nHA  home assistant\r\n".encode())
    assert load_lexicon(path) == {"zorp": "garage door", "ha": "home assistant"}


def test_a_file_that_is_not_utf8_is_named_and_its_good_lines_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Saved as Latin-1 by an editor: the accented line cannot be read, the rest can.
    path = lexicon(tmp_path, "café  kafay\nzorp  garage door\n".encode("latin-1"))
    with caplog.at_level(logging.WARNING):
        entries = load_lexicons([tmp_path])
    assert entries == {"zorp": "garage door"}
    assert f"{path}:1" in caplog.text and "UTF-8" in caplog.text


def test_every_data_dir_still_counts_when_one_lexicon_is_bad(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    lexicon(first, b"\xff\xfe\x00broken\nzorp  garage door\n")
    lexicon(second, b"zorp  back door\nfoo  bar\n")
    assert load_lexicons([first, second]) == {"zorp": "garage door", "foo": "bar"}


def test_a_huge_lexicon_costs_one_warning_and_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A lexicon is read on a describe (rescan), sent whole to every worker and compiled
    into one pattern: a huge one would stall the server and every burst."""
    from wyoming_kokoro.text.g2p import MAX_LEXICON_BYTES

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    line = b"zorp  garage door\n"
    path = lexicon(first, line * (MAX_LEXICON_BYTES // len(line) + 1))
    lexicon(second, b"foo  bar\n")
    with caplog.at_level(logging.WARNING):
        entries = load_lexicons([first, second])
    assert entries == {"foo": "bar"}
    assert len(caplog.records) == 1 and str(path) in caplog.text, caplog.text


def test_a_file_of_bad_lines_costs_a_few_warnings_and_entries_are_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Thousands of bad lines were thousands of warnings; thousands of entries made a
    pattern whose cost every spoken piece pays."""
    from wyoming_kokoro.text.g2p import MAX_LEXICON_ENTRIES

    good = "".join(f"word{n}  said {n}\n" for n in range(MAX_LEXICON_ENTRIES + 5))
    lexicon(tmp_path, b"justoneword\n" * 5000 + good.encode())
    with caplog.at_level(logging.WARNING):
        entries = load_lexicons([tmp_path])
    assert len(entries) == MAX_LEXICON_ENTRIES and entries["word0"] == "said 0"
    assert len(caplog.records) <= 12, len(caplog.records)
    assert "5000" in caplog.text  # the skipped lines counted
