"""Pronunciations saved from the page: the lexicon reader reads back what was saved,
or the save is refused in its words; every other line stays byte for byte."""

from __future__ import annotations

import codecs
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_kokoro.catalog.file_edit import EditError
from wyoming_kokoro.text.g2p import LEXICON_NAME, load_lexicon, load_lexicons
from wyoming_kokoro.text.g2p.lexicon_writing import (
    check_entry,
    read_entries,
    remove_entry,
    save_entry,
)

USERS_FILE = (
    codecs.BOM_UTF8
    + b"# Words for my house\n"
    + b"HA  home assistant\n"
    + b"caf\xe9 not UTF-8, skipped by the reader\n"
    + b"Kokoro /k\xcb\x88Ok\xc9\x99\xc9\xb9O/\n"
    + b"ha  hey\n"  # the later line of a word is the one read
    + b"lonely\n"
)

words = st.one_of(
    st.text(min_size=0, max_size=12),
    st.text(st.sampled_from("aBé#/ \t\u00a0\x85-"), max_size=6),
    st.sampled_from(["HA", "ha", "Kokoro", "#hash", "a#b", "İstanbul", "ǅ"]),
)
pronunciations = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["/kˈOkəɹO/", "home assistant", "  padded  ", "", "two\nlines", "\ud800"]),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(word=words, said=pronunciations)
def test_a_saved_word_reads_back_as_saved_or_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, word: str, said: str
) -> None:
    folder = tmp_path / "dir"
    folder.mkdir(exist_ok=True)
    path = folder / LEXICON_NAME
    path.write_bytes(USERS_FILE)
    try:
        key, pronunciation = save_entry(folder, word, said)
    except EditError as err:
        assert path.read_bytes() == USERS_FILE
        # Where the reader has words for it, they are the refusal's.
        line = f"{word.strip()}\t{said.strip()}"
        if "\n" not in line and "\r" not in line and line.isprintable():
            only = tmp_path / "only.txt"
            only.write_text(line + "\n", encoding="utf-8")
            caplog.clear()
            with caplog.at_level(logging.WARNING):
                read = load_lexicon(only)
            if caplog.records:
                assert str(err) in caplog.records[0].getMessage()
            else:  # the reader takes the line, but as another word or as a comment
                assert read.get(word.strip().lower()) != said.strip()
        return
    assert load_lexicon(path)[key] == pronunciation == said.strip()
    assert key == word.strip().lower()
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8 + b"# Words for my house\n")
    assert b"caf\xe9 not UTF-8, skipped by the reader\n" in data
    for other, kept in {"kokoro": "/kˈOkəɹO/", "ha": "hey"}.items():
        if other != key:
            assert load_lexicon(path)[other] == kept


def test_saving_a_word_again_replaces_its_lines_where_the_last_one_was(tmp_path: Path) -> None:
    (tmp_path / LEXICON_NAME).write_bytes(USERS_FILE)
    save_entry(tmp_path, "Ha", "house automation")
    assert (tmp_path / LEXICON_NAME).read_bytes() == (
        codecs.BOM_UTF8
        + b"# Words for my house\n"
        + b"caf\xe9 not UTF-8, skipped by the reader\n"
        + b"Kokoro /k\xcb\x88Ok\xc9\x99\xc9\xb9O/\n"
        + b"Ha\thouse automation\n"
        + b"lonely\n"
    )


def test_a_new_word_is_added_at_the_end_and_removed_again(tmp_path: Path) -> None:
    (tmp_path / LEXICON_NAME).write_bytes(b"HA  home assistant")  # no newline at its end
    save_entry(tmp_path, "zorblatt", "pineapple")
    assert (tmp_path / LEXICON_NAME).read_bytes() == b"HA  home assistant\nzorblatt\tpineapple\n"
    read = read_entries(tmp_path / LEXICON_NAME)
    assert read == {"ha": "home assistant", "zorblatt": "pineapple"}
    remove_entry(tmp_path, "ZORBLATT")
    assert (tmp_path / LEXICON_NAME).read_bytes() == b"HA  home assistant\n"
    with pytest.raises(EditError, match="no pronunciation of 'zorblatt'"):
        remove_entry(tmp_path, "zorblatt")


def test_windows_line_ends_are_kept(tmp_path: Path) -> None:
    (tmp_path / LEXICON_NAME).write_bytes(b"HA  home assistant\r\n")
    save_entry(tmp_path, "kokoro", "/kˈOkəɹO/")
    assert (tmp_path / LEXICON_NAME).read_bytes() == (
        b"HA  home assistant\r\nkokoro\t/k\xcb\x88Ok\xc9\x99\xc9\xb9O/\r\n"
    )


def test_the_first_data_dir_is_written_and_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    second.mkdir()
    (second / LEXICON_NAME).write_text("HA home assistant\n", encoding="utf-8")
    save_entry(first, "HA", "hey")
    assert load_lexicons([first, second]) == {"ha": "hey"}


@pytest.mark.parametrize(
    ("word", "said", "why"),
    [
        ("", "x", "expected 'word pronunciation'"),
        ("word", "  ", "expected 'word pronunciation'"),
        ("#word", "x", "would be a comment"),
        ("two words", "x", "without spaces"),
        ("a", "b\nc", "one line"),
    ],
)
def test_refusals_say_why(word: str, said: str, why: str) -> None:
    with pytest.raises(EditError, match=why):
        check_entry(word, said)
