"""Plain text and Markdown read into chapters (issue 58): chapters at the headings a
reader sees, every word of the prose spoken once, markup not spoken."""

from __future__ import annotations

import contextlib
import logging
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kokoro_say.book import Book, BookError
from kokoro_say.books import is_document, read_book

WORD = re.compile(r"\w+")


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def titles(book: Book) -> list[str]:
    return [c.title for c in book.chapters]


def words(text: str) -> list[str]:
    return WORD.findall(text)


def spoken_words(book: Book) -> list[str]:
    return [w for c in book.chapters for w in words(c.text)]


# -- plain text ------------------------------------------------------------


def test_text_chapters_are_the_lines_that_stand_alone_as_chapter_headings(tmp_path):
    text = (
        "A short note before it all.\n\n"
        "Chapter 1\n\nIt was a dark night.\n\n"
        "CHAPTER TWO\n\nThe rain stopped.\n\n"
        "Part II\n\nLater, much later.\n\n"
        "The chapter 3 of this story is not a heading.\n"
    )
    book = read_book(write(tmp_path, "night_story.txt", text))
    assert titles(book) == ["night story", "Chapter 1", "CHAPTER TWO", "Part II"]
    assert book.title == "night story"
    # The heading is spoken at the start of its chapter, as a reader reads it.
    assert book.chapters[1].text == "Chapter 1\n\nIt was a dark night."
    assert spoken_words(book) == words(text)


def test_a_chapter_line_with_its_title_below_is_one_heading(tmp_path):
    text = "CHAPTER I.\nDown the Rabbit-Hole\n\nAlice was beginning to get very tired.\n"
    book = read_book(write(tmp_path, "alice.txt", text))
    assert titles(book) == ["CHAPTER I. Down the Rabbit-Hole"]


def test_a_roman_numeral_standing_alone_starts_a_chapter(tmp_path):
    text = "HEART OF DARKNESS\n\nI\n\nThe Nellie swung.\n\nII.\n\nOne evening.\n\nMix it.\n"
    book = read_book(write(tmp_path, "h.txt", text))
    assert titles(book) == ["h", "I", "II."]


def test_text_without_headings_is_one_chapter_named_after_the_file(tmp_path):
    book = read_book(write(tmp_path, "my-notes.txt", "Just one thought.\n\nAnd another.\n"))
    assert titles(book) == ["my notes"]
    assert book.chapters[0].text == "Just one thought.\n\nAnd another."


def test_hard_wrapped_prose_is_joined_and_short_lines_are_kept(tmp_path):
    prose = (
        "It is a truth universally acknowledged, that a single man in possession\n"
        "of a good fortune, must be in want of a wife.\n"
    )
    verse = "Roses are red,\nviolets are blue.\n"
    book = read_book(write(tmp_path, "p.txt", prose + "\n" + verse))
    first, second = book.chapters[0].text.split("\n\n")
    assert "\n" not in first  # one sentence across a wrap is one sentence
    assert second == "Roses are red,\nviolets are blue."  # a line of verse ends where it ends


def test_a_contents_list_is_not_a_run_of_empty_chapters(tmp_path):
    contents = "\n\n".join(f"Chapter {n}" for n in range(1, 6))
    body = "\n\n".join(f"Chapter {n}\n\nWords of chapter {n}." for n in range(1, 6))
    book = read_book(write(tmp_path, "b.txt", f"Contents\n\n{contents}\n\n{body}\n"))
    assert titles(book) == ["b", *(f"Chapter {n}" for n in range(1, 6))]
    # The list is read where it stands, once, as the opening's last words.
    assert words(book.chapters[0].text) == ["Contents", *words(contents)]


def test_a_part_heading_right_before_a_chapter_heading_titles_it_too(tmp_path):
    text = "Part One\n\nChapter 1\n\nThe start.\n\nChapter 2\n\nMore.\n"
    book = read_book(write(tmp_path, "b.txt", text))
    assert titles(book) == ["Part One: Chapter 1", "Chapter 2"]
    assert book.chapters[0].text == "Part One\n\nChapter 1\n\nThe start."


def test_project_gutenbergs_licence_is_not_read(tmp_path):
    text = (
        "The Project Gutenberg eBook of Tiny Tale\n\nTitle: Tiny Tale\n\nAuthor: A. Writer\n\n"
        "*** START OF THE PROJECT GUTENBERG EBOOK TINY TALE ***\n\n"
        "Produced by Some Volunteers and the Online Distributed\nProofreading Team.\n\n"
        "Chapter 1\n\nOnce.\n\n"
        "End of the Project Gutenberg EBook of Tiny Tale\n\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK TINY TALE ***\n\nLicence words here.\n"
    )
    book = read_book(write(tmp_path, "pg123.txt", text))
    assert (book.title, book.author) == ("Tiny Tale", "A. Writer")
    assert spoken_words(book) == ["Chapter", "1", "Once"]


def test_text_that_is_not_utf8_is_read_with_one_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="kokoro_say"):
        book = read_book(write(tmp_path, "x.txt", b"caf\xe9 au lait\n"))
    assert spoken_words(book) == ["caf", "au", "lait"]
    assert any("x.txt is not all UTF-8" in r.getMessage() for r in caplog.records)


# -- Markdown ----------------------------------------------------------------


def test_markdown_chapters_are_its_top_headings_and_a_single_h1_is_the_title(tmp_path):
    text = (
        "# The Book\n\nA preface with **bold** and a [link](https://example.com).\n\n"
        "## First\n\nSome *text*\nwrapped softly.\n\n### A subsection\n\nStill first.\n\n"
        "## Second\n\n- one item\n- two items\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\n# not a heading\nprint('code is not read')\n```\n\nAfter the code.\n"
    )
    book = read_book(write(tmp_path, "book.md", text))
    assert book.title == "The Book"
    assert titles(book) == ["The Book", "First", "Second"]
    assert book.chapters[0].text == "The Book\n\nA preface with bold and a link."
    assert (
        book.chapters[1].text
        == "First\n\nSome text wrapped softly.\n\nA subsection\n\nStill first."
    )
    assert book.chapters[2].text == "Second\n\none item\ntwo items\n\na, b\n1, 2\n\nAfter the code."


def test_markdown_with_several_h1_splits_at_each_and_setext_headings_count(tmp_path):
    text = "Intro\n=====\n\nHello.\n\n# Middle\n\nThere.\n\nEnd\n---\n\nBye.\n"
    book = read_book(write(tmp_path, "doc.markdown", text))
    assert titles(book) == ["Intro", "Middle", "End"]
    assert book.title == "doc"


def test_markdown_front_matter_gives_title_and_author_and_is_not_read(tmp_path):
    text = "---\ntitle: Field Notes\nauthor: Sam Doe\n---\n\nNo headings at all.\n"
    book = read_book(write(tmp_path, "notes.md", text))
    assert (book.title, book.author) == ("Field Notes", "Sam Doe")
    assert titles(book) == ["Field Notes"]
    assert spoken_words(book) == ["No", "headings", "at", "all"]


def test_a_document_with_nothing_to_say_is_an_error(tmp_path):
    with pytest.raises(BookError, match="nothing to say"):
        read_book(write(tmp_path, "empty.md", "```\ncode only\n```\n\n---\n"))


def test_markdown_notes_images_comments_and_link_definitions_are_not_read(tmp_path):
    text = (
        "# Notes\n\n"
        "A claim[^1] with a picture ![a red barn at dusk](barn.png) and a [link][ref].\n\n"
        "<!--\nA comment for the editor.\n-->\n\n"
        "[ref]: https://example.com/a/long/address 'A title'\n"
        "[Aside]: a line of prose that only looks like a definition.\n\n"
        "[^1]: The note itself, at the end.\n"
    )
    book = read_book(write(tmp_path, "n.md", text))
    assert book.chapters[0].text == (
        "Notes\n\nA claim with a picture and a link.\n\n"
        "[Aside]: a line of prose that only looks like a definition."
    )


def test_what_is_a_document_and_what_is_not(tmp_path):
    for name in ("a.epub", "b.PDF", "c.html", "d.htm", "e.xhtml", "f.md", "g.txt", "h.ssml"):
        assert is_document(Path(name)), name
    assert not is_document(Path("notes"))
    assert not is_document(Path("song.mp3"))


def test_an_unknown_kind_or_a_missing_file_is_a_short_error(tmp_path):
    with pytest.raises(BookError, match=r"^cannot read song\.mp3: not a kind of document"):
        read_book(write(tmp_path, "song.mp3", b"ID3"))
    with pytest.raises(BookError) as err:
        read_book(tmp_path / "gone.txt")
    assert str(err.value) == "cannot read gone.txt: no such file or directory"


# -- property: every word of the prose, once ------------------------------------

_WORDS = st.lists(st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True), min_size=1, max_size=6)
_LINE = _WORDS.map(" ".join)
_MARKS = st.sampled_from(["{}", "**{}**", "*{}*", "`{}`", "[{}](http://x.y/z)", "_{}_"])


_KINDS = ["h1", "h2", "h3", "para", "list", "1.", "code", "table", "quote", "setext", "wrapped"]


@st.composite
def markdown(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A Markdown document and the words of its prose, in order."""
    blocks: list[str] = []
    said: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(_KINDS))
        line = draw(_LINE)
        if kind == "code":  # never read, even a line that looks like a heading
            blocks.append(f"```\n# {line}\n```")
            continue
        if kind in ("setext", "wrapped"):
            other = draw(_LINE)
            blocks.append(f"{line}\n===" if kind == "setext" else f"{line}\n{other}")
            said += line.split() + ([] if kind == "setext" else other.split())
            continue
        if kind == "table":
            other = draw(_LINE)
            blocks.append(f"| {line} | {other} |\n|---|---|")
            said += [*line.split(), *other.split()]
            continue
        marked = " ".join(draw(_MARKS).format(w) for w in line.split())
        prefix = {"h1": "# ", "h2": "## ", "h3": "### ", "list": "- ", "quote": "> ", "1.": "1. "}
        blocks.append(prefix.get(kind, "") + marked)
        said += line.split()
    return "\n\n".join(blocks) + "\n", said


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc=markdown())
def test_markdown_keeps_every_word_of_its_prose_once(tmp_path, doc):
    text, said = doc
    try:
        book = read_book(write(tmp_path, "p.md", text))
    except BookError:
        assert not said
        return
    assert spoken_words(book) == said


_TEXT_LINE = st.one_of(
    _LINE,
    _LINE.map(lambda s: s + "."),
    st.sampled_from(["Chapter 1", "CHAPTER TWO", "Part III", "Prologue", ""]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_TEXT_LINE, max_size=20))
def test_text_keeps_every_word_once_whatever_its_lines(tmp_path, lines):
    text = "\n".join(lines)
    try:
        book = read_book(write(tmp_path, "t.txt", text))
    except BookError:
        assert not words(text)
        return
    assert spoken_words(book) == words(text)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.text(max_size=200), name=st.sampled_from(["a.md", "a.txt"]))
def test_any_text_reads_or_fails_with_a_book_error(tmp_path, data, name):
    with contextlib.suppress(BookError):
        read_book(write(tmp_path, name, data.encode("utf-8", "surrogatepass")))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("book.md", "# The Book\n\n## First\n\nOne.\n\n## Second\n\nTwo.\n"),
        ("book.html", "<h1>The Book</h1><h2>First</h2><p>One.</p><h2>Second</h2><p>Two.</p>"),
    ],
)
def test_a_title_with_no_preface_is_read_at_the_first_chapter_s_start(tmp_path, name, text):
    """No chapter that says only the book's title (a mark a second long in an M4B)."""
    book = read_book(write(tmp_path, name, text))
    assert book.title == "The Book"
    assert titles(book) == ["First", "Second"]
    assert [c.text for c in book.chapters] == ["The Book\n\nFirst\n\nOne.", "Second\n\nTwo."]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_text_file_saved_as_utf16_with_its_mark_is_read_as_text(tmp_path, caplog, encoding):
    """Windows' editors save "Unicode" as UTF-16 with a byte order mark, which names the
    encoding: read as UTF-8, every letter had a NUL beside it and no chapter was found."""
    text = "\ufeffChapter 1\r\n\r\nHello there.\r\n\r\nChapter 2\r\n\r\nGoodbye.\r\n"
    data = text.encode(encoding) if encoding != "utf-16" else text[1:].encode(encoding)
    with caplog.at_level(logging.WARNING):
        book = read_book(write(tmp_path, "notes.txt", data))
    assert titles(book) == ["Chapter 1", "Chapter 2"]
    assert [c.text for c in book.chapters] == ["Chapter 1\n\nHello there.", "Chapter 2\n\nGoodbye."]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_page_break_ends_a_paragraph_so_a_chapter_can_start_after_it(tmp_path):
    book = read_book(write(tmp_path, "b.txt", "Chapter 1\n\nText one.\n\fChapter 2\n\nText two.\n"))
    assert titles(book) == ["Chapter 1", "Chapter 2"]
    assert [c.text for c in book.chapters] == ["Chapter 1\n\nText one.", "Chapter 2\n\nText two."]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20
    ),
    kind=st.sampled_from(["md", "html"]),
)
def test_no_title_carries_a_control_character_to_the_terminal(tmp_path, title, kind):
    """Titles are printed (--list-chapters, progress) and written into tags: a book's
    escape sequences ("\\x1b[2J", "\\x1b]0;...\\x07", C1's "\\x9b") must not reach a terminal."""
    title = f"Chapter \x1b[2J{title}\x9b31m\x07"
    text = (
        f"# {title}\n\nWords here.\n\n# Two\n\nMore words.\n"
        if kind == "md"
        else f"<title>{title}</title><h1>{title}</h1><p>Words here.</p><h1>Two</h1><p>More.</p>"
    )
    book = read_book(write(tmp_path, f"b.{kind}", text))
    shown = [book.title or "", book.author or "", *(c.title for c in book.chapters)]
    assert not [t for t in shown if any(unicodedata.category(ch) == "Cc" for ch in t)], shown
