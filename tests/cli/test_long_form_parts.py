"""The long form's bookkeeping, without the model: parts planned from a chapter's
steps, kept and found again (resume), joined in the book's order whatever order they
finished in, progress as parts finish, how many processes, chapter file names."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kokoro_say import parallel
from kokoro_say.book import Book, Chapter
from kokoro_say.book_outputs import Joiner, Spoken, chapter_file
from kokoro_say.chapter_steps import ChapterSteps
from kokoro_say.plan import CHAPTER_PAUSE, Part, Pause, Say, group
from kokoro_say.progress import ChapterProgress
from kokoro_say.resume import WorkDir, work_dir_for

from wyoming_kokoro.catalog.presets import Choice, Preset
from wyoming_kokoro.settings import SpeechSettings
from wyoming_kokoro.synthesis.loudness import Leveler
from wyoming_kokoro.timeline import WordTime

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
_steps = st.lists(
    st.one_of(
        st.builds(Say, _text, st.just("jm_kumo"), st.just(1.0), st.just(1.0), st.just("en-us")),
        st.builds(Pause, st.integers(0, 2000)),
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(steps=_steps, limit=st.integers(1, 200))
def test_parts_keep_every_step_in_order_and_each_says_something(
    steps: list[Say | Pause], limit: int
) -> None:
    parts = group(3, steps, limit)
    said = [s for s in steps if isinstance(s, Say)]
    if not said:
        assert parts == []
        return
    # Leading pauses go with the first part, trailing ones with the last.
    assert [s for p in parts for s in p.steps] == steps
    for part in parts:
        assert part.chapter == 3
        assert any(isinstance(s, Say) for s in part.steps)
        sizes = [len(s.text) for s in part.steps if isinstance(s, Say)]
        assert sum(sizes) <= limit or len(sizes) == 1


def test_a_part_s_key_changes_with_its_voice_speed_text_and_the_run() -> None:
    part = Part(0, (Say("Hello there.", "jm_kumo", 1.0, 1.0, "en-us"),))
    keys = {
        part.key("run"),
        part.key("another run"),
        Part(0, (Say("Hello there!", "jm_kumo", 1.0, 1.0, "en-us"),)).key("run"),
        Part(0, (Say("Hello there.", "jf_alpha", 1.0, 1.0, "en-us"),)).key("run"),
        Part(0, (Say("Hello there.", "jm_kumo", 1.1, 1.0, "en-us"),)).key("run"),
        Part(0, (Say("Hello there.", "jm_kumo", 1.0, 1.0, "en-gb"),)).key("run"),
    }
    assert len(keys) == 6


def _words(n: int) -> list[WordTime]:
    return [WordTime(f"w{i}", i / 10, i / 10 + 0.05) for i in range(n)] + [
        WordTime("—", None, None)
    ]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_parts_are_joined_in_the_books_order_whatever_order_they_finished_in(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    # Processes finish parts in any order: the output is still the book's order, each
    # part's words placed after the audio before it.
    lengths = data.draw(st.lists(st.integers(0, 3000), min_size=1, max_size=6))
    order = data.draw(st.permutations(range(len(lengths))))
    work = WorkDir(tmp_path_factory.mktemp("parts") / ".out.wav.kokoro-say-parts", "out.wav")
    work.open("run")
    audio = [np.full(n, i + 1, dtype=np.int16) for i, n in enumerate(lengths)]
    for index in order:
        work.save(f"p{index}", audio[index], _words(index))
    chapters = [Spoken(1, "One", tuple(f"p{i}" for i in range(len(lengths))))]
    joiner = Joiner(work, lead=0.01, tail=0.02)
    joined = np.concatenate(list(joiner.audio(chapters)))
    lead = 240
    assert np.array_equal(joined[lead : len(joined) - 480], np.concatenate(audio))
    total, starts = joiner.samples(chapters, joined=True)
    assert total == len(joined) and starts == [lead]
    at = lead
    expected = []
    for index, n in enumerate(lengths):
        expected += [w.shifted(at / 24000) for w in _words(index)]
        at += n
    assert joiner.words == expected


def test_a_part_is_done_only_when_whole(tmp_path: Path) -> None:
    work = WorkDir(tmp_path / "work", "out.m4b")
    work.open("run")
    work.save("a", np.arange(100, dtype=np.int16), [WordTime("Hi.", 0.0, 0.1)])
    assert work.done("a") and not work.done("b")
    pcm, words = work.load("a")
    assert np.array_equal(pcm, np.arange(100)) and words == [WordTime("Hi.", 0.0, 0.1)]
    whole = (tmp_path / "work" / "a.part").read_bytes()
    for cut in (0, 5, 20, len(whole) - 1):  # a file cut anywhere is not done
        (tmp_path / "work" / "a.part").write_bytes(whole[:cut])
        assert not work.done("a")
        with pytest.raises(OSError, match="run again"):
            work.load("a")
    assert not any(".tmp" in p.name for p in (tmp_path / "work").iterdir())


def test_another_key_starts_over_and_a_second_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "work"
    first = WorkDir(path, "out.m4b")
    first.open("run 1")
    first.save("a", np.ones(10, dtype=np.int16), [])
    (path / "a.part.tmpxyz").write_bytes(b"half")  # a write a kill cut short
    with pytest.raises(OSError, match=r"another kokoro-say is writing out\.m4b"):
        WorkDir(path, "out.m4b").open("run 1")
    first.close()
    again = WorkDir(path, "out.m4b")
    again.open("run 1")
    assert again.done("a") and not (path / "a.part.tmpxyz").exists()
    again.close()
    changed = WorkDir(path, "out.m4b")
    changed.open("run 2")  # another input or option: nothing kept counts
    assert not changed.done("a") and not (path / "a.part").exists()
    changed.remove()
    assert not path.exists()


def test_the_work_dir_is_hidden_beside_the_output(tmp_path: Path) -> None:
    assert work_dir_for(str(tmp_path / "book.m4b")) == tmp_path / ".book.m4b.kokoro-say-parts"
    assert work_dir_for(str(tmp_path / "chapters") + "/") == (
        tmp_path / ".chapters.kokoro-say-parts"
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_progress_has_a_line_per_chapter_and_reaches_100(data: st.DataObject) -> None:
    # Parts of several chapters finishing in any order (several processes).
    sizes = data.draw(st.lists(st.lists(st.integers(1, 500), min_size=1, max_size=4), min_size=1))
    parts = [(c, n) for c, chapter in enumerate(sizes) for n in chapter]
    order = data.draw(st.permutations(parts))
    now = [0.0]
    out = io.StringIO()
    chapters = [(f"Title {c}", sum(chapter), 0) for c, chapter in enumerate(sizes)]
    progress = ChapterProgress(chapters, bar=False, clock=lambda: now[0], stream=out)
    for chapter, chars in order:
        now[0] += 1
        progress.part_done(chapter, chars)
    lines = out.getvalue().splitlines()
    assert sorted(int(line.split()[2]) for line in lines) == list(range(1, len(sizes) + 1))
    percents = [int(line.split("(")[1].split(" %")[0]) for line in lines]
    assert percents == sorted(percents) and percents[-1] == 100
    assert all(line.endswith(f": Title {int(line.split()[2]) - 1}") for line in lines)


def test_progress_bar_counts_only_what_is_left_after_a_resume() -> None:
    now = [0.0]
    out = io.StringIO()
    # Chapter one was spoken before the stop: its time is not this run's pace.
    progress = ChapterProgress(
        [("One", 100, 100), ("Two", 100, 0)], bar=True, clock=lambda: now[0], stream=out
    )
    now[0] = 10.0
    progress.part_done(1, 50)
    assert progress.percent() == 75
    assert progress.seconds_left() == pytest.approx(10.0)
    assert "Chapter 2/2" in out.getvalue() and "about 0:10 left" in out.getvalue()


@settings(max_examples=100, deadline=None)
@given(
    threads=st.integers(0, 64),
    parts=st.integers(1, 500),
    memory=st.one_of(st.none(), st.integers(0, 64_000)),
    cpus=st.integers(1, 256),
)
def test_process_count_stays_within_cpus_memory_and_parts(
    threads: int, parts: int, memory: int | None, cpus: int
) -> None:
    count = parallel.process_count(threads, parts, memory, cpus)
    assert 1 <= count <= parts
    assert count <= (threads or cpus)
    if memory is not None:
        assert count == 1 or count * parallel.PROCESS_MB <= memory


@settings(max_examples=100, deadline=None)
@given(title=st.text(max_size=300), number=st.integers(1, 150))
def test_chapter_files_are_numbered_plain_names_in_the_directory(
    tmp_path_factory: pytest.TempPathFactory, title: str, number: int
) -> None:
    directory = str(tmp_path_factory.getbasetemp())
    path = chapter_file(directory, Spoken(number, title, ()), 150, "flac")
    name = os.path.basename(path)
    assert os.path.dirname(path) == directory
    assert name.startswith(f"{number:03d}") and name.endswith(".flac")
    assert "/" not in name and "\x00" not in name and len(name.encode()) < 255


def _steps_of(
    chapter: Chapter, presets: dict[str, Preset] | None = None, **speech: object
) -> list[Say | Pause]:
    config = SimpleNamespace(speech=SpeechSettings(**speech), lang=None)  # type: ignore[arg-type]
    assets = SimpleNamespace(voice_names=("jm_kumo", "jf_alpha"))
    choice = Choice("jm_kumo", 1.0, 1.0, "en-us")
    book = Book(None, None, "en", None, (chapter,))
    made = ChapterSteps(config, assets, presets or {}, choice, 1.0, book)  # type: ignore[arg-type]
    return made.steps(chapter)


def test_a_chapter_s_paragraphs_are_the_paragraph_pause_apart_and_none_ends_it() -> None:
    text = "The fox ran.\n\nThe dog slept. It was late.\n\n"
    steps = _steps_of(Chapter("One", text), sentence_pause=300, paragraph_pause=900)
    assert steps == [
        Say("The fox ran.", "jm_kumo", 1.0, 1.0, "en-us", 300),
        Pause(600),  # what the paragraph has over the sentence's own pause
        Say("The dog slept. It was late.", "jm_kumo", 1.0, 1.0, "en-us", 300),
    ]


def test_an_ssml_chapter_s_voice_rate_volume_and_breaks_are_its_steps() -> None:
    text = (
        '<speak>Hello there. <break time="800ms"/><voice name="jf_alpha">It is me.</voice>'
        '<prosody rate="1.5" volume="+6dB">Quickly now.</prosody></speak>'
    )
    steps = _steps_of(Chapter("One", text, ssml=True))
    said = [(s.text, s.voice, s.speed, round(s.volume, 2)) for s in steps if isinstance(s, Say)]
    assert said == [
        ("Hello there.", "jm_kumo", 1.0, 1.0),
        ("It is me.", "jf_alpha", 1.0, 1.0),
        ("Quickly now.", "jm_kumo", 1.5, 2.0),
    ]
    pauses = [s for s in steps if isinstance(s, Pause)]
    assert len(pauses) == 1 and 0 < pauses[0].ms <= 800


def test_an_ssml_voice_naming_a_preset_brings_its_pauses_and_breaks_follow_them() -> None:
    # Inside <voice name="slow">, the preset's sentence pause, and a </p> there adds what
    # its paragraph pause has over it; outside, the run's (sentence 300, paragraph 900).
    slow = Preset("slow", "jf_alpha", sentence_pause=800, paragraph_pause=2000)
    text = (
        "<speak><p>Hello there.</p><voice name='slow'><p>It is me.</p><p>Slowly now.</p>"
        "</voice><p>Back again.</p></speak>"
    )
    steps = _steps_of(
        Chapter("One", text, ssml=True), {"slow": slow}, sentence_pause=300, paragraph_pause=900
    )
    assert [(s.text, s.sentence_pause) if isinstance(s, Say) else s.ms for s in steps] == [
        ("Hello there.", 300),
        600,
        ("It is me.", 800),
        1200,
        ("Slowly now.", 800),
        1200,
        ("Back again.", 300),
    ]


def test_list_chapters_shows_number_title_words_and_time_without_the_model(
    tmp_path: Path,
) -> None:
    book = tmp_path / "book.md"
    book.write_text(
        "# Chapter One\n\nThe fox ran across the field.\n\n"
        "# Chapter Two\n\n" + "The dog slept by the fire. " * 60 + "\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", "-f", str(book), "--list-chapters", "--debug"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split(None, 3) for line in result.stdout.splitlines()[2:]]
    assert rows[0] == ["1", "8", "0:03", "Chapter One"]
    assert rows[1] == ["2", "362", "2:12", "Chapter Two"]
    assert rows[2] == ["370", "2:15", "2", "chapters (time estimated)"]
    assert "Model loaded" not in result.stderr and "Speaking" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.md"]


def test_chapters_joined_into_one_file_are_the_chapter_pause_apart(tmp_path: Path) -> None:
    work = WorkDir(tmp_path / "work", "book.wav")
    work.open("run")
    work.save("a", np.full(1000, 7, dtype=np.int16), [WordTime("One.", 0.0, 0.04)])
    work.save("b", np.full(500, 9, dtype=np.int16), [WordTime("Two.", 0.0, 0.02)])
    chapters = [Spoken(1, "One", ("a",)), Spoken(2, "Two", ("b",))]
    joiner = Joiner(work, lead=0.0, tail=0.0)
    joined = np.concatenate(list(joiner.audio(chapters)))
    gap = round(CHAPTER_PAUSE * 24000)
    assert np.array_equal(joined, np.r_[np.full(1000, 7), np.zeros(gap), np.full(500, 9)])
    assert joiner.samples(chapters, joined=True) == (len(joined), [0, 1000 + gap])
    assert [w.start for w in joiner.words] == [0.0, round((1000 + gap) / 24000, 3)]
    # A file per chapter: each alone, no pause before it.
    alone = np.concatenate(list(joiner.audio(chapters[1:], joined=False)))
    assert np.array_equal(alone, np.full(500, 9)) and joiner.words[0].start == 0.0


def test_a_voice_not_measured_yet_is_measured_by_one_process_first() -> None:
    # Processes starting together would each speak their first part unlevelled, every
    # one at another chapter: one speaks enough to measure the voice, then the rest.
    leveler = Leveler(None, "voices")  # knows the embedded voices' loudness only
    installed = ("jm_kumo", "af_heart")
    kumo = [Part(0, (Say("Hello.", "jm_kumo", 1.0, 1.0, "en-us"),))]
    heart = [Part(1, (Say("Hello.", "af_heart", 1.0, 1.0, "en-us"),))]
    blend = [Part(1, (Say("Hello.", "jm_kumo(1)+af_heart(1)", 1.0, 1.0, "en-us"),))]
    assert not parallel.unmeasured(kumo, installed, leveler)
    assert parallel.unmeasured(kumo + heart, installed, leveler)
    assert parallel.unmeasured(blend, installed, leveler)


@settings(max_examples=100, deadline=None)
@given(chars=st.lists(st.integers(1, 2000), max_size=20), unmeasured=st.booleans())
def test_enough_parts_to_measure_go_first_and_no_more(chars: list[int], unmeasured: bool) -> None:
    alone = parallel.to_measure(chars, unmeasured)
    if not unmeasured:
        assert alone == 0
        return
    assert sum(chars[:alone]) >= parallel.MEASURE_CHARS or alone == len(chars)
    assert alone == 0 or sum(chars[: alone - 1]) < parallel.MEASURE_CHARS


def test_a_part_that_cannot_be_kept_says_so_in_words_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = WorkDir(tmp_path / "work", "book.m4b")
    work.open("run")
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "work" / "x.tmp"))
    monkeypatch.setattr(os, "fsync", lambda _: (_ for _ in ()).throw(full))
    with pytest.raises(OSError) as caught:
        work.save("a", np.ones(10, dtype=np.int16), [])
    assert (
        str(caught.value) == "cannot keep the finished parts of book.m4b: no space left on device"
    )
    assert not work.done("a")
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["lock", "manifest.json"]


def _write_chapter_dir(tmp_path: Path, directory: Path, titles: list[str]) -> None:
    from kokoro_say.book_outputs import Target, write

    work = WorkDir(tmp_path / f"work-{len(titles)}", str(directory))
    work.open("run")
    for n, _ in enumerate(titles):
        work.save(f"p{n}", np.full(100, n + 1, dtype=np.int16), [])
    chapters = [Spoken(n + 1, title, (f"p{n}",)) for n, title in enumerate(titles)]
    book = Book(None, None, None, None, tuple(Chapter(t, t) for t in titles))
    joiner = Joiner(work, lead=0.0, tail=0.0)
    write(Target("dir", str(directory), "wav"), book, chapters, joiner, None, "srt", True)
    work.remove()


def test_a_chapter_directory_written_again_keeps_no_stale_chapter_files(tmp_path: Path) -> None:
    """A book written again into its directory (edited, or read differently) leaves
    only its own chapter files: the last run's that are not written again go, so a
    player does not play an old "01" beside the new one. The user's files stay."""
    directory = tmp_path / "book"
    directory.mkdir()
    (directory / "notes.txt").write_text("mine")
    (directory / "01 Mine.wav").write_bytes(b"mine")
    _write_chapter_dir(tmp_path, directory, ["Contents", "One", "Two"])
    _write_chapter_dir(tmp_path, directory, ["One", "Two"])
    assert sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) == [
        *("01 Mine.wav", "01 One.srt", "01 One.wav", "02 Two.srt", "02 Two.wav", "notes.txt"),
    ]


def test_a_run_starting_while_a_finished_one_tidies_up_is_refused_not_robbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finished run removes its parts: a run of the same command starting at that
    moment found them, then lost them under it ("a finished part is gone")."""
    import shutil

    from kokoro_say import resume

    path = tmp_path / "work"
    finished = WorkDir(path, "out.m4b")
    finished.open("run")
    finished.save("a", np.ones(10, dtype=np.int16), [])
    started: list[str] = []
    rmtree = shutil.rmtree

    def meanwhile(target: object, **kwargs: object) -> None:
        try:
            WorkDir(path, "out.m4b").open("run")
            started.append("found its parts")
        except OSError as err:
            started.append(str(err))
        rmtree(target, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(resume.shutil, "rmtree", meanwhile)
    finished.remove()
    assert started == ["another kokoro-say is writing out.m4b now"]
    assert not path.exists()
