"""kokoro-say reads any bytes as text: what is not UTF-8 is not spoken, one warning
says where, the rest is spoken (issue 55)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kokoro_say.reading import decoded


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=64))
def test_any_bytes_are_text_with_one_warning_if_any_are_bad(
    data: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kokoro_say"):
        text = decoded(data, "stdin")
    text.encode("utf-8")  # what the text side and espeak are given: never a surrogate
    try:
        expected = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        assert [r.getMessage().split(":")[0] for r in caplog.records] == ["stdin is not all UTF-8"]
        assert text.count("\ufffd") > expected_count(data)
    else:
        assert text == expected and not caplog.records


@pytest.mark.parametrize(
    ("data", "first"), [(b"ab\xffcd", 2), (b"\xef\xbb\xbfab\xff", 5), (b"\xce", 0)]
)
def test_the_warning_names_the_first_bad_bytes_place(
    data: bytes, first: int, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kokoro_say"):
        text = decoded(data, "stdin")
    assert "\ufeff" not in text  # a byte-order mark is not text
    assert [r.getMessage() for r in caplog.records] == [
        "stdin is not all UTF-8: 1 byte sequence not read and not spoken "
        f"(the first at byte {first})"
    ]


def expected_count(data: bytes) -> int:
    """U+FFFD the bytes spell themselves."""
    return data.decode("utf-8", "ignore").count("\ufffd")


def say(*args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )


@pytest.mark.model
@settings(max_examples=6, deadline=None)
@given(data=st.binary(max_size=24))
def test_random_bytes_on_stdin_never_give_a_traceback(data: bytes) -> None:
    # Most random bytes have nothing to say (refused before the model loads); the
    # few examples keep the model's time small.
    result = say("-o", "/dev/null", "--format", "raw", "-q", stdin=data)
    err = result.stderr.decode()
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert sum("is not all UTF-8" in line for line in lines) <= 1, err
    if result.returncode != 0:
        # One clear line: the text is empty or has nothing to say.
        assert result.returncode == 1 and lines[-1].startswith("Error: the text"), err
        assert all(line.startswith("WARNING") for line in lines[:-1]), err


@pytest.mark.parametrize("where", ["stdin", "file", "argument"])
def test_a_bad_byte_is_left_out_and_the_rest_spoken(tmp_path: Path, where: str, listener) -> None:
    data = b"The back \xce door is open.\n"  # the byte
    out = tmp_path / "out.wav"
    if where == "file":
        source = tmp_path / "note.txt"
        source.write_bytes(data)
        result = say("-f", str(source), "-o", str(out), "-q")
    elif where == "argument":  # Python hands such bytes of argv on as surrogates
        result = say(data.strip(), "-o", str(out), "-q")
    else:
        result = say("-o", str(out), "-q", stdin=data)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    named = {"file": str(tmp_path / "note.txt"), "argument": "the text"}.get(where, where)
    assert err.strip().splitlines() == [
        f"WARNING kokoro_say: {named} is not all UTF-8: 1 byte sequence not read and not "
        "spoken (the first at byte 9)"
    ], err
    audio, _ = soundfile.read(out, dtype="int16")
    listener.check_later("The back door is open.", audio)
