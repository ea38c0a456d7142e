"""The sha256 mark of a cache entry's files: any change to a file's bytes is found."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.catalog import digests

NAMES = ("plan.onnx", "generator.onnx", "tail.onnx")


@settings(max_examples=30, deadline=None)
@given(
    contents=st.lists(st.binary(min_size=1, max_size=2048), min_size=3, max_size=3),
    which=st.integers(0, 2),
    at=st.integers(0, 2047),
    flip=st.integers(1, 255),
)
def test_a_changed_byte_is_found_in_its_file_only(
    contents: list[bytes], which: int, at: int, flip: int
) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        for file, data in zip(NAMES, contents, strict=True):
            (directory / file).write_bytes(data)
        digests.write(directory, NAMES, directory / "verified", "20 samples bit-identical")
        recorded = digests.recorded(directory / "verified")
        assert recorded is not None and set(recorded) == set(NAMES)
        assert not any(digests.mismatch(directory, recorded, file) for file in NAMES)
        data = bytearray(contents[which])
        data[at % len(data)] ^= flip
        (directory / NAMES[which]).write_bytes(bytes(data))
        found = [file for file in NAMES if digests.mismatch(directory, recorded, file)]
        assert found == [NAMES[which]]


def test_a_mark_without_digests_lists_none(tmp_path: Path) -> None:
    (tmp_path / "verified").write_text("20 samples bit-identical\n")
    assert digests.recorded(tmp_path / "verified") is None
    assert digests.recorded(tmp_path / "missing") is None


def test_a_missing_or_unlisted_file_is_a_mismatch(tmp_path: Path) -> None:
    (tmp_path / "plan.onnx").write_bytes(b"x")
    digests.write(tmp_path, ["plan.onnx"], tmp_path / "verified")
    recorded = digests.recorded(tmp_path / "verified")
    assert recorded is not None
    assert digests.mismatch(tmp_path, recorded, "generator.onnx")  # not listed
    (tmp_path / "plan.onnx").unlink()
    assert digests.mismatch(tmp_path, recorded, "plan.onnx")
