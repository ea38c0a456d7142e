"""kokoro-say's long form end to end: a real subprocess, the real model, real signals.
A three-chapter book of one short sentence each: its M4B's marks where the judge hears
each chapter begin, with the EPUB's title, author and cover in its tags; a file per
chapter with captions, spoken by two processes; and a run stopped by SIGINT, then
killed, that goes on where it stopped, speaks less the third time and ends with the
same audio, while a changed option starts over."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import av
import mutagen.mp4
import numpy as np
import pytest
from ebooklib import epub

pytestmark = pytest.mark.model

BOOK = (
    "# Chapter One\n\nThe fox ran across the field.\n\n"
    "# Chapter Two\n\nThe dog slept by the fire.\n\n"
    "# Chapter Three\n\nThe bird sang in the morning.\n"
)
TITLES = ["Chapter One", "Chapter Two", "Chapter Three"]
SAID = [
    "The fox ran across the field.",
    "The dog slept by the fire.",
    "The bird sang in the morning.",
]
HEARD = [
    "Chapter one. The fox ran across the field.",
    "Chapter two. The dog slept by the fire.",
    "Chapter three. The bird sang in the morning.",
]


def _env(tmp_path: Path) -> dict[str, str]:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    return {**env, "TMPDIR": str(tmpdir)}


def _start(
    tmp_path: Path, *args: str, log: str = "err.txt", own_group: bool = False
) -> tuple[subprocess.Popen, Path]:
    """kokoro-say started with its stderr in `log` (`own_group`: in a process group of
    its own, as a terminal's job is)."""
    err = tmp_path / log
    with err.open("wb") as stream:
        process = subprocess.Popen(
            [sys.executable, "-m", "kokoro_say.main", *args],
            env=_env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=stream,
            start_new_session=own_group,
        )
    return process, err


def _finish(process: subprocess.Popen) -> tuple[int, float]:
    """Wait for `process`: its exit code and the CPU seconds of it and its children."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_utime + usage.ru_stime


def _say(tmp_path: Path, *args: str) -> tuple[int, float, str]:
    process, err = _start(tmp_path, *args)
    code, cpu = _finish(process)
    return code, cpu, err.read_text(errors="replace")


def _parts(work: Path) -> int:
    return len(list(work.glob("*.part"))) if work.is_dir() else 0


def _stop_after(process: subprocess.Popen, work: Path, parts: int, sig: int) -> int:
    """Send `sig` once `parts` parts are kept; the exit code."""
    deadline = time.monotonic() + 180
    while _parts(work) < parts:
        assert process.poll() is None, "kokoro-say ended before it was stopped"
        assert time.monotonic() < deadline, "no part was kept"
        time.sleep(0.05)
    process.send_signal(sig)
    return _finish(process)[0]


def _wait_for(err: Path, text: str, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + 120
    while text not in (said := err.read_text(errors="replace")):
        assert process.poll() is None, said
        assert time.monotonic() < deadline, said
        time.sleep(0.05)
    return said


def _decoded(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        frames = [f.to_ndarray().reshape(-1) for f in container.decode(audio=0)]
    return (np.clip(np.concatenate(frames), -1, 1) * 32767).astype(np.int16)


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + b"\x20\x60\xa0" * 2 + b"\x00" + b"\xa0\x60\x20" * 2)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _epub(path: Path, cover: bytes) -> Path:
    """The book as an EPUB with its title, author and cover (ebooklib, as publishers')."""
    book = epub.EpubBook()
    book.set_identifier("long-form-test")
    book.set_title("The Three Animals")
    book.set_language("en")
    book.add_author("Ada Writer")
    book.set_cover("cover.png", cover)
    docs = []
    for number, (title, said) in enumerate(zip(TITLES, SAID, strict=True), 1):
        doc = epub.EpubHtml(title=title, file_name=f"c{number}.xhtml", lang="en")
        doc.content = f"<html><body><h1>{title}</h1><p>{said}</p></body></html>"
        book.add_item(doc)
        docs.append(doc)
    book.toc = [epub.Link(d.file_name, d.title, d.id) for d in docs]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *docs]
    epub.write_epub(str(path), book)
    return path


def test_m4b_has_a_mark_where_each_chapter_is_heard_and_the_books_tags(
    tmp_path: Path, listener
) -> None:
    cover = _png()
    source = _epub(tmp_path / "book.epub", cover)
    out = tmp_path / "book.m4b"
    code, _, err = _say(tmp_path, "-f", str(source), "-o", str(out), "--threads", "1")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.epub", "book.m4b", "err.txt", "tmp"]
    tags = mutagen.mp4.MP4(out).tags
    assert tags is not None
    assert tags["\xa9nam"] == ["The Three Animals"] and tags["\xa9ART"] == ["Ada Writer"]
    assert tags["aART"] == ["Ada Writer"] and bytes(tags["covr"][0]) == cover
    with av.open(str(out)) as container:
        marks = [
            (c["metadata"]["title"], float(c["start"] * c["time_base"]))
            for c in container.chapters()
        ]
    assert [title for title, _ in marks] == TITLES
    found = mutagen.mp4.MP4(out).chapters
    assert found is not None
    assert [c.title for c in found] == TITLES  # and the same times, to the millisecond
    assert [c.start for c in found] == pytest.approx([s for _, s in marks], abs=0.002)
    audio = _decoded(out)
    bounds = [round(s * 24000) for _, s in marks] + [len(audio)]
    # Each chapter, cut at its marks, is heard as that chapter from its first word: a
    # mark late would lose "Chapter", one early would bring the last chapter's words.
    for number, said in enumerate(HEARD):
        listener.check_later(said, audio[bounds[number] : bounds[number + 1]])
    assert os.listdir(tmp_path / "tmp") == []


def test_files_per_chapter_and_a_stopped_run_goes_on_with_the_same_audio(
    tmp_path: Path,
) -> None:
    source = tmp_path / "book.md"
    source.write_text(BOOK, encoding="utf-8")
    common = ("-f", str(source), "--format", "wav", "--captions", "srt")

    # Uninterrupted, in two speaking processes: the reference.
    ref = tmp_path / "ref"
    code, full_cpu, err = _say(tmp_path, *common, "-o", f"{ref}/", "--threads", "2")
    assert code == 0, err
    names = [f"0{n} {t}" for n, t in enumerate(TITLES, 1)]
    # Beside the chapters, only the hidden list of them (a run again tidies by it).
    assert sorted(p.name for p in ref.iterdir()) == sorted(
        [f"{n}.wav" for n in names] + [f"{n}.srt" for n in names] + [".kokoro-say-chapters.json"]
    )
    for name, title in zip(names, TITLES, strict=True):
        captions = (ref / f"{name}.srt").read_text(encoding="utf-8")
        assert captions.startswith("1\n00:00:00,") and title.split()[0] in captions

    out, work = tmp_path / "out", tmp_path / ".out.kokoro-say-parts"
    args = (*common, "-o", f"{out}/", "--threads", "1", "--debug")
    # Another speed, stopped after its first part: nothing of it may be used later.
    process, _ = _start(tmp_path, *common, "-o", f"{out}/", "--threads", "1", "--speed", "1.2")
    assert _stop_after(process, work, 1, signal.SIGINT) == 130
    # The options of the reference: all three parts to speak (the other speed's are
    # not taken), stopped by Ctrl-C after the first.
    process, log = _start(tmp_path, *args, log="second.txt")
    _wait_for(log, "Speaking 3 of 3 parts", process)
    assert _stop_after(process, work, 1, signal.SIGINT) == 130
    assert "kokoro-say: stopped by SIGINT" in log.read_text()
    assert not any(p.suffix == ".wav" for p in out.iterdir())
    # Again, killed outright after the second part.
    process, log = _start(tmp_path, *args, log="third.txt")
    _wait_for(log, "Speaking 2 of 3 parts", process)
    assert _stop_after(process, work, 2, signal.SIGKILL) == -signal.SIGKILL
    # The last run speaks only the part left: less CPU than the whole book took.
    process, log = _start(tmp_path, *args, log="last.txt")
    code, last_cpu = _finish(process)
    assert code == 0, log.read_text()
    assert "Speaking 1 of 3 parts" in log.read_text()
    assert last_cpu < full_cpu, (last_cpu, full_cpu)
    for name in names:
        assert (out / f"{name}.wav").read_bytes() == (ref / f"{name}.wav").read_bytes(), name
        assert (out / f"{name}.srt").read_text() == (ref / f"{name}.srt").read_text(), name
    assert not work.exists()
    assert os.listdir(tmp_path / "tmp") == []


def _speakers(parent: int) -> list[int]:
    """The speaking processes (multiprocessing's spawned children) of `parent`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and b"spawn_main" in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("attempt", range(3))  # a race: each run hit it about half the time
def test_ctrl_c_while_the_speaking_processes_start_is_one_line_and_leaves_none(tmp_path, attempt):
    """Ctrl-C reaches the terminal's whole process group: a speaking process still
    starting (before it could ignore SIGINT) printed its own traceback."""
    book = tmp_path / "book.md"
    book.write_text(BOOK, encoding="utf-8")
    args = ["-f", str(book), "-o", str(tmp_path / "b.m4b"), "--threads", "2"]
    process, err = _start(tmp_path, *args, own_group=True)
    deadline = time.monotonic() + 60
    while len(speakers := _speakers(process.pid)) < 2:
        assert process.poll() is None, err.read_text(errors="replace")
        assert time.monotonic() < deadline, "no speaking processes started"
        time.sleep(0.01)
    time.sleep(0.05 * attempt)  # early and later in their start
    os.killpg(process.pid, signal.SIGINT)
    code = _finish(process)[0]
    said = err.read_text(errors="replace")
    assert code == 128 + signal.SIGINT, said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
    assert said.strip().splitlines()[-1] == "kokoro-say: stopped by SIGINT"
    gone = time.monotonic() + 30
    while [pid for pid in speakers if Path(f"/proc/{pid}").exists()]:
        assert time.monotonic() < gone, "a speaking process outlived kokoro-say"
        time.sleep(0.05)
