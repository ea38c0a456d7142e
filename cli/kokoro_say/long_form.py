"""kokoro-say's long form: a document read into chapters, planned into parts, the parts
spoken on every core the run may use and kept so that the same command continues
after a stop, then joined into the output (one file, an M4B, a file per chapter).

Text, a .txt or a .md file into one audio file is spoken as it always was (main.py);
any other document, an M4B or directory output, --ssml and --list-chapters come here.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wyoming_kokoro import __version__
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Choice, Preset
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.text.g2p import load_lexicons

from . import book_outputs, m4b, parallel, plan, word_times
from .book import Book, BookError, Chapter
from .book_outputs import Joiner, Spoken, Target
from .captions import CaptionFile
from .chapter_steps import ChapterSteps
from .formats import available_formats, format_for
from .output import AudioSink
from .plan import Part
from .progress import ChapterProgress
from .reading import read_text
from .resume import WorkDir, key_of, work_dir_for
from .speaking import Setup

if TYPE_CHECKING:
    from .main import SayConfig

_LOGGER = logging.getLogger("kokoro_say")

# Read as text into one file, as before the long form: their chapters matter only
# to an output that keeps them.
_PLAIN = (".txt", ".md", ".markdown")
# Bump when a part's audio would differ for the same inputs (kept parts are dropped).
_PARTS_FORMAT = 1
_DIR_FORMAT = "flac"  # a file per chapter, without --format: lossless, plays everywhere


def wanted(config: SayConfig) -> bool:
    """Whether this run is the long form's."""
    if config.list_chapters or config.ssml:
        return True
    if config.output and book_outputs.chaptered(config.output):
        return True
    if config.file and config.file != "-" and Path(config.file).suffix.lower() not in _PLAIN:
        from .books import is_document

        return is_document(Path(config.file))
    return False


def read(config: SayConfig) -> Book:
    """The document: a file read by its kind, or TEXT/stdin as one chapter."""
    if config.file and config.file != "-":
        from .books import is_document, read_book

        path = Path(config.file)
        if config.ssml or is_document(path):
            try:
                return read_book(path, ssml=config.ssml)
            except BookError as err:
                raise click.ClickException(str(err)) from err
    text = read_text(config.text, config.file)
    if not text.strip():
        raise click.ClickException("the text is empty")
    title = Path(config.file).stem if config.file and config.file != "-" else "Chapter 1"
    return Book(None, None, None, None, (Chapter(title, text, ssml=config.ssml),))


def list_chapters(book: Book, speed: float) -> None:
    """Number, title, words and an estimated duration of each chapter."""
    if book.title or book.author:
        click.echo(" — ".join(x for x in (book.title, book.author) if x))
    click.echo(f"{'#':>3}  {'words':>7}  {'time':>7}  title")
    total = 0
    for number, chapter in enumerate(book.chapters, 1):
        count = plan.words(chapter.text)
        total += count
        time = plan.clock(plan.estimate_seconds(count, speed))
        click.echo(f"{number:>3}  {count:>7}  {time:>7}  {chapter.title}")
    time = plan.clock(plan.estimate_seconds(total, speed))
    click.echo(f"{'':>3}  {total:>7}  {time:>7}  {len(book.chapters)} chapters (time estimated)")


def run(
    config: SayConfig,
    assets: Assets,
    presets: dict[str, Preset],
    choice: Choice,
    speed: float,
) -> None:
    book = read(config)
    if config.list_chapters:
        list_chapters(book, speed)
        return
    if not config.output:
        raise click.UsageError("no output: give -o FILE, -o BOOK.m4b or -o DIR/")
    target = _target(config.output, config.fmt)
    voice = ChapterSteps(config, assets, presets, choice, speed, book)
    parts = [
        p for n, chapter in enumerate(book.chapters) for p in plan.group(n, voice.steps(chapter))
    ]
    if not parts:
        raise click.ClickException("the text has nothing to say (only symbols or markup)")
    timed = config.captions is not None
    engine = config.engine
    lexicon = load_lexicons(config.model.data_dirs)
    run_key = key_of(
        {
            "format": _PARTS_FORMAT,
            "version": __version__,
            "model": _identity(assets.model),
            "voices": _identity(assets.voices),
            "engine": [
                engine.normalize,
                engine.max_call_tokens,
                engine.max_decode_seconds,
                engine.decode,
            ],
            "lexicon": sorted(lexicon.items()),
            "timed": timed,
        }
    )
    keys = [part.key(run_key) for part in parts]
    spoken = _spoken(book, parts, keys)
    # Outputs that cannot be written fail before anything is spoken.
    if target.kind == "dir":
        _make_dir(target.path)
    elif target.kind == "m4b":
        _check_parent(target.path)
    if config.captions and target.kind != "dir":
        CaptionFile(config.captions).discard()
    elif config.captions:
        book_outputs.caption_ext(config.captions)
    work, temporary = _work_dir(target)
    sink = AudioSink(target.path, target.fmt) if target.kind == "file" else None
    try:
        work.open(key_of([run_key, keys]))
        todo = [(n, part, keys[n]) for n, part in enumerate(parts) if not work.done(keys[n])]
        if todo and timed:
            word_times.prepare(assets, engine.effective_threads, config.quiet)
        _speak(config, assets, engine, lexicon, work, parts, todo, book)
        joiner = Joiner(work, config.speech.lead_silence / 1000, config.speech.tail_silence / 1000)
        spaced = not any(_dense(c.text) for c in book.chapters)
        book_outputs.write(target, book, spoken, joiner, sink, config.captions, spaced)
        sink = None
    except BaseException:
        # The finished parts stay for the next run (a stream's cannot be resumed).
        work.remove() if temporary else work.close()
        raise
    finally:
        if sink is not None:
            sink.__exit__(RuntimeError, None, None)  # never written: no partial file left
    work.remove()


def _speak(
    config: SayConfig,
    assets: Assets,
    engine: EngineSettings,
    lexicon: dict[str, str],
    work: WorkDir,
    parts: list[Part],
    todo: list[parallel.Job],
    book: Book,
) -> None:
    if not todo:
        return
    left = {n for n, _, _ in todo}
    chapters = []
    for number, chapter in enumerate(book.chapters):
        mine = [n for n, p in enumerate(parts) if p.chapter == number]
        total = sum(parts[n].chars for n in mine)
        chapters.append(
            (chapter.title, total, total - sum(parts[n].chars for n in mine if n in left))
        )
    progress = None
    if not config.quiet:
        progress = ChapterProgress(chapters, bar=sys.stderr.isatty())
    count = parallel.process_count(
        engine.threads, len(todo), parallel.available_mb(), parallel.usable_cpus()
    )
    _LOGGER.debug("Speaking %d of %d parts in %d processes", len(todo), len(parts), count)
    setup = Setup(assets, engine, lexicon, config.captions is not None, work.path, work.shown)

    def done(index: int) -> None:
        if progress is not None:
            progress.part_done(parts[index].chapter, parts[index].chars)

    alone = 0
    if count > 1:
        from wyoming_kokoro.synthesis.loudness import for_voices_file

        said = [part for _, part, _ in todo]
        unmeasured = parallel.unmeasured(said, assets.voice_names, for_voices_file(assets.voices))
        alone = parallel.to_measure([part.chars for part in said], unmeasured)
        if alone:
            _LOGGER.debug("%d parts first in one process: the voice's loudness is measured", alone)
    try:
        parallel.render(todo, count, setup, done, alone)
    except parallel.SpeakingFailed as err:
        raise click.ClickException(str(err)) from err
    finally:
        if progress is not None:
            progress.close()


def _spoken(book: Book, parts: list[Part], keys: list[str]) -> list[Spoken]:
    """The chapters that say something, numbered in order, with their parts' keys."""
    spoken: list[Spoken] = []
    for number, chapter in enumerate(book.chapters):
        mine = tuple(keys[n] for n, p in enumerate(parts) if p.chapter == number)
        if not mine:
            _LOGGER.warning(
                "Chapter %d (%s) has nothing to say: left out", number + 1, chapter.title
            )
            continue
        spoken.append(Spoken(len(spoken) + 1, chapter.title, mine))
    return spoken


def _target(output: str, fmt: str | None) -> Target:
    if output.lower().endswith(m4b.EXTENSIONS):
        if fmt:
            raise click.UsageError(f"{Path(output).name} is an AAC audiobook: leave --format out")
        return Target("m4b", output, "m4b")
    if book_outputs.is_dir_output(output):
        chosen = (fmt or _DIR_FORMAT).lower()
        if chosen not in available_formats() or chosen == "raw":
            raise click.UsageError(f"cannot write chapter files as {chosen}")
        return Target("dir", output, chosen)
    try:
        chosen = format_for(output, fmt)
    except ValueError as err:
        raise click.UsageError(str(err)) from err
    if chosen not in available_formats():
        raise click.ClickException(f"cannot write {chosen} here; available: {available_formats()}")
    return Target("file", output, chosen)


def _work_dir(target: Target) -> tuple[WorkDir, bool]:
    """Beside the output; for a stream (stdout, a FIFO) a temporary one: no resume."""
    path = target.path
    streamed = path == "-"
    if not streamed and target.kind == "file":
        try:
            streamed = not stat.S_ISREG(os.stat(path).st_mode)
        except FileNotFoundError:
            streamed = False
        except OSError:
            streamed = True
    if streamed:
        return WorkDir(Path(tempfile.mkdtemp(prefix="kokoro-say-parts-")), path), True
    return WorkDir(work_dir_for(path), path), False


def _make_dir(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        reason = (err.strerror or str(err)).lower()
        raise OSError(f"cannot write {path}: {reason}") from err


def _check_parent(path: str) -> None:
    parent = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(parent):
        raise OSError(
            f"cannot write {path}: directory {os.path.dirname(path) or '.'} does not exist"
        )
    if os.path.isdir(path):
        raise OSError(f"cannot write {path}: it is a directory")


def _identity(path: Path) -> list[object]:
    try:
        info = path.stat()
        return [str(path.resolve()), info.st_size, info.st_mtime_ns]
    except OSError:
        return [str(path)]


def _dense(text: str) -> bool:
    """Text written without spaces between words (Japanese, Chinese)."""
    return sum(1 for ch in text if ord(ch) >= 0x3000) > len(text) // 4
