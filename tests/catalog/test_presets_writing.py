"""A preset saved from the page: written so the reader reads it back as saved, or
refused in the reader's own words; the user's other entries and comments kept."""

from __future__ import annotations

import logging
import math
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_kokoro.catalog.file_edit import EditError
from wyoming_kokoro.catalog.presets_file import PRESETS_FILE, load_presets, parse_presets
from wyoming_kokoro.catalog.presets_writing import remove_preset, save_preset

INSTALLED = ("jm_kumo", "jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro")

USERS_FILE = """\
# My presets, by hand.
slow_kumo:
  voice: jm_kumo   # the calm one
  speed: 0.8

# A blend for the kitchen
kitchen:
  voice: jf_alpha(2)+jm_kumo(1)
  volume: 1.2
  description: >
    Alpha with a little
    Kumo

broken:
  voice: nobody
"""


def reader_warning(name: str, fields: dict[str, Any], caplog: pytest.LogCaptureFixture) -> str:
    """What the reader says of this entry written into a file by hand ("" if it takes it)."""
    text = yaml.safe_dump({name: fields}, allow_unicode=True)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        found = parse_presets(text, INSTALLED, PRESETS_FILE)
    if found:
        return ""
    (record,) = caplog.records
    return record.getMessage().split(" skipped: ", 1)[1]


names = st.one_of(
    st.text(st.sampled_from("abcXYZ019_-. "), min_size=1, max_size=70),
    st.text(max_size=12),
    st.sampled_from(["jm_kumo", "on", "null", "1.5", " padded ", "~", "a" * 64, "a" * 65]),
)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10, 10),
    st.sampled_from([0.5, 2.0, 0.0, 4.0, 4.0001, True, "1.0", None]),
)
voices = st.one_of(
    st.sampled_from(INSTALLED),
    st.sampled_from(["jm_kumo(2)+jf_alpha(1)", "jf_alpha(0.3)+jm_kumo(0.7)", "af_heart", ""]),
    st.text(max_size=20),
    st.just(3),
)
field_values: dict[str, Any] = {
    "voice": voices,
    "speed": numbers,
    "volume": numbers,
    "language": st.one_of(st.sampled_from(["en-gb", "en-us", "ja", "xx", ""]), st.just(1)),
    "description": st.one_of(st.text(max_size=250), st.just(["a", "list"])),
    "colour": st.just("blue"),
    **dict.fromkeys(
        ("lead_silence", "tail_silence", "sentence_pause", "paragraph_pause"),
        st.one_of(st.integers(-10, 5010), st.sampled_from([0, 5000, 300, 0.5, "300", None])),
    ),
}
entries = st.fixed_dictionaries(
    {"voice": voices},
    optional={key: value for key, value in field_values.items() if key != "voice"},
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=names, fields=entries)
def test_a_saved_preset_reads_back_as_saved_or_is_refused_as_the_reader_would(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, fields: dict[str, Any]
) -> None:
    folder = tmp_path / "dir"
    folder.mkdir(exist_ok=True)
    (folder / PRESETS_FILE).write_text(USERS_FILE, encoding="utf-8")
    expected = reader_warning(name, fields, caplog)
    try:
        saved = save_preset(folder, name, fields, INSTALLED)
    except EditError as err:
        assert expected, f"refused what the reader takes: {err}"
        assert str(err) == expected
        assert (folder / PRESETS_FILE).read_text(encoding="utf-8") == USERS_FILE
        return
    assert not expected, f"saved what the reader skips: {expected}"
    read = load_presets([folder], INSTALLED)
    assert read[saved.name] == saved
    assert {"slow_kumo", "kitchen"} <= set(read)
    assert "# A blend for the kitchen\n" in (folder / PRESETS_FILE).read_text(encoding="utf-8")


def test_saving_again_replaces_the_entry_in_place_and_keeps_the_comments(tmp_path: Path) -> None:
    (tmp_path / PRESETS_FILE).write_text(USERS_FILE, encoding="utf-8")
    save_preset(tmp_path, "slow_kumo", {"voice": "jf_nezumi", "speed": 0.7}, INSTALLED)
    text = (tmp_path / PRESETS_FILE).read_text(encoding="utf-8")
    assert text.startswith("# My presets, by hand.\nslow_kumo:\n  voice: jf_nezumi\n  speed: 0.7\n")
    assert "# A blend for the kitchen\nkitchen:" in text and "broken:" in text
    assert text.count("slow_kumo") == 1
    read = load_presets([tmp_path], INSTALLED)
    assert read["slow_kumo"].voice == "jf_nezumi" and read["slow_kumo"].speed == 0.7
    assert read["kitchen"].description == "Alpha with a little Kumo"


def test_a_new_preset_goes_at_the_end_and_a_removed_one_leaves_the_rest(tmp_path: Path) -> None:
    (tmp_path / PRESETS_FILE).write_text(USERS_FILE.rstrip("\n"), encoding="utf-8")  # no last \n
    save_preset(tmp_path, "narrator", {"voice": "jf_alpha", "volume": 1.5}, INSTALLED)
    text = (tmp_path / PRESETS_FILE).read_text(encoding="utf-8")
    assert text.endswith("  voice: nobody\nnarrator:\n  voice: jf_alpha\n  volume: 1.5\n")
    remove_preset(tmp_path, "kitchen", INSTALLED)
    text = (tmp_path / PRESETS_FILE).read_text(encoding="utf-8")
    assert "kitchen:" not in text and "Kumo\n" not in text
    assert "# A blend for the kitchen\n" in text  # a comment above stays: it may say more
    assert set(load_presets([tmp_path], INSTALLED)) == {"slow_kumo", "narrator"}
    with pytest.raises(EditError, match="no preset 'kitchen'"):
        remove_preset(tmp_path, "kitchen", INSTALLED)


def test_the_first_preset_of_a_new_file(tmp_path: Path) -> None:
    folder = tmp_path / "not" / "yet"
    save_preset(folder, "slow", {"voice": "jm_kumo", "speed": 0.8}, INSTALLED)
    assert (folder / PRESETS_FILE).read_text(encoding="utf-8") == (
        "slow:\n  voice: jm_kumo\n  speed: 0.8\n"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{a: {voice: jm_kumo}}\n", "one {...} mapping"),
        ("a: [\n", "not valid YAML"),
        ("- a\n- b\n", "expected preset names as keys"),
    ],
)
def test_a_file_that_cannot_be_edited_in_place_is_left_alone(
    tmp_path: Path, text: str, why: str
) -> None:
    (tmp_path / PRESETS_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(EditError, match=why) as refused:
        save_preset(tmp_path, "slow", {"voice": "jm_kumo"}, INSTALLED)
    assert str(tmp_path) not in str(refused.value)  # a user reads it: no paths
    assert (tmp_path / PRESETS_FILE).read_text(encoding="utf-8") == text


def test_concurrent_saves_keep_every_preset(tmp_path: Path) -> None:
    # The lock: without it two writers read the same old text and one save is lost.
    def save(index: int) -> None:
        save_preset(tmp_path, f"p{index}", {"voice": "jm_kumo", "speed": 1.0}, INSTALLED)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(load_presets([tmp_path], INSTALLED)) == {f"p{i}" for i in range(8)}
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_linked_file_stays_a_link(tmp_path: Path) -> None:
    shared = tmp_path / "share"
    shared.mkdir()
    (shared / PRESETS_FILE).write_text(USERS_FILE, encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    (data / PRESETS_FILE).symlink_to(shared / PRESETS_FILE)
    save_preset(data, "slow", {"voice": "jm_kumo", "speed": math.pi / 4}, INSTALLED)
    assert (data / PRESETS_FILE).is_symlink()
    assert "slow" in load_presets([shared], INSTALLED)


def test_a_save_does_not_warn_about_the_users_other_entries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The rescan after the save warns about 'broken' once; the save itself reads the
    # file twice and must not add two more.
    (tmp_path / PRESETS_FILE).write_text(USERS_FILE, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        save_preset(tmp_path, "narrator", {"voice": "jf_alpha"}, INSTALLED)
        remove_preset(tmp_path, "narrator", INSTALLED)
    assert caplog.records == []
