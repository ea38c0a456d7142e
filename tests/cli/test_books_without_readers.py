"""kokoro-say where the EPUB or PDF reader is not installed (the container images leave
them out): one line that names the package, exit 1, and the other kinds still read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def say_without(blocked: tuple[str, ...], *args: str) -> subprocess.CompletedProcess[str]:
    """kokoro-say in a process where importing `blocked` fails as if uninstalled."""
    code = (
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        "from kokoro_say.main import main\n"
        f"sys.argv = ['kokoro-say', *{args!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("name", "blocked", "package"),
    [
        ("book.epub", ("ebooklib",), "ebooklib"),
        ("book.epub", ("lxml",), "lxml"),
        ("book.pdf", ("pypdf",), "pypdf"),
    ],
)
def test_a_missing_reader_is_named_with_its_install_command(
    tmp_path: Path, name: str, blocked: tuple[str, ...], package: str
) -> None:
    book = tmp_path / name
    book.write_bytes(b"not read: the reader is missing first")
    result = say_without(blocked, "--list-chapters", "-f", str(book))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        f"Error: cannot read {name}: this installation has no {package} package, which "
        f"reads {book.suffix} files (install it with: pip install {package})"
    )
    assert "Traceback" not in result.stderr


def test_markdown_reads_without_the_epub_and_pdf_readers(tmp_path: Path) -> None:
    book = tmp_path / "book.md"
    book.write_text("# My Book\n\n## One\n\nFirst words.\n\n## Two\n\nSecond words.\n")
    result = say_without(
        ("ebooklib", "lxml", "pypdf", "cryptography"), "--list-chapters", "-f", str(book)
    )
    assert result.returncode == 0, result.stderr
    assert "One" in result.stdout and "Two" in result.stdout
