"""EPUBs built here with ebooklib, read into chapters (issue 58): the table of contents
gives the chapters, in the spine's order; notes, their markers and alt text are not
read; tables are read row by row; DRM, a missing TOC and empty chapters are handled."""

from __future__ import annotations

import logging
import re
import zipfile
from pathlib import Path

import pytest
from ebooklib import epub
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kokoro_say.book import Book, BookError
from kokoro_say.books import read_book

WORD = re.compile(r"\w+")
PNG = (  # a 1x1 PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def doc(name: str, body: str, title: str = "") -> epub.EpubHtml:
    item = epub.EpubHtml(uid=name.split(".")[0], title=title or name, file_name=name, lang="en")
    item.content = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
    return item


def make_epub(
    path: Path,
    docs: list[epub.EpubHtml],
    toc: list | None = None,
    *,
    cover: bytes | None = None,
    spine: list | None = None,
    nav: bool = True,
    guide: list[dict[str, str]] | None = None,
) -> Path:
    book = epub.EpubBook()
    book.guide = guide or []
    book.set_identifier("id-58")
    book.set_title("The Test Book")
    book.set_language("en-GB")
    book.add_author("Ada Writer")
    if cover is not None:
        book.set_cover("cover.png", cover)
    for item in docs:
        book.add_item(item)
    book.toc = toc if toc is not None else [epub.Link(d.file_name, d.title, d.id) for d in docs]
    book.add_item(epub.EpubNcx())
    if nav:
        book.add_item(epub.EpubNav())
    book.spine = spine if spine is not None else [*(["nav"] if nav else []), *docs]
    epub.write_epub(str(path), book)
    return path


def titles(book: Book) -> list[str]:
    return [c.title for c in book.chapters]


def words(text: str) -> list[str]:
    return WORD.findall(text)


def test_chapters_come_from_the_toc_in_spine_order_with_the_books_tags(tmp_path):
    docs = [
        doc("one.xhtml", "<h1>Chapter One</h1><p>The first words.</p>", "Chapter One"),
        doc("two.xhtml", "<h1>Chapter Two</h1><p>The second words.</p>", "Chapter Two"),
    ]
    book = read_book(make_epub(tmp_path / "b.epub", docs, cover=PNG))
    assert (book.title, book.author, book.language) == ("The Test Book", "Ada Writer", "en-GB")
    assert titles(book) == ["Chapter One", "Chapter Two"]
    assert book.chapters[0].text == "Chapter One\n\nThe first words."
    assert book.cover is not None and book.cover.data == PNG and book.cover.mime == "image/png"


def test_an_epub2_book_has_its_chapters_from_the_ncx(tmp_path):
    docs = [
        doc("text/one.xhtml", "<h1>One</h1><p>First.</p>", "First chapter"),
        doc("text/two.xhtml", "<h1>Two</h1><p>Second.</p>", "Second chapter"),
    ]
    book = read_book(make_epub(tmp_path / "old.epub", docs, nav=False))
    assert titles(book) == ["First chapter", "Second chapter"]
    assert [words(c.text) for c in book.chapters] == [["One", "First"], ["Two", "Second"]]


def test_a_nested_toc_is_flattened_in_order(tmp_path):
    docs = [
        doc("p1.xhtml", "<h1>Part One</h1>"),
        doc("c1.xhtml", "<h2>Chapter 1</h2><p>Alpha.</p>"),
        doc("c2.xhtml", "<h2>Chapter 2</h2><p>Beta.</p>"),
        doc("c3.xhtml", "<h2>Chapter 3</h2><p>Gamma.</p>"),
    ]
    links = [
        epub.Link(d.file_name, t, d.id)
        for d, t in zip(docs, ["", "Ch 1", "Ch 2", "Ch 3"], strict=True)
    ]
    toc = [(epub.Section("Part One", href="p1.xhtml"), [links[1], links[2]]), links[3]]
    book = read_book(make_epub(tmp_path / "n.epub", docs, toc))
    assert titles(book) == ["Part One", "Ch 1", "Ch 2", "Ch 3"]
    assert [words(c.text) for c in book.chapters][1:] == [
        ["Chapter", "1", "Alpha"],
        ["Chapter", "2", "Beta"],
        ["Chapter", "3", "Gamma"],
    ]


def test_toc_entries_in_one_file_split_it_at_their_anchors(tmp_path):
    body = (
        '<p>Before anything.</p><h2 id="a">First</h2><p>One.</p>'
        '<section id="b"><h2>Second</h2><p>Two.</p></section><p>Still two.</p>'
    )
    docs = [doc("all.xhtml", body)]
    toc = [epub.Link("all.xhtml#a", "First", "a"), epub.Link("all.xhtml#b", "Second", "b")]
    book = read_book(make_epub(tmp_path / "a.epub", docs, toc))
    assert titles(book) == ["The Test Book", "First", "Second"]
    assert [words(c.text) for c in book.chapters] == [
        ["Before", "anything"],
        ["First", "One"],
        ["Second", "Two", "Still", "two"],
    ]


def test_spine_documents_not_in_the_toc_join_the_chapter_before(tmp_path):
    docs = [
        doc("c1.xhtml", "<h1>One</h1><p>Start.</p>"),
        doc("c1b.xhtml", "<p>Continued in a second file.</p>"),
        doc("c2.xhtml", "<h1>Two</h1><p>End.</p>"),
    ]
    toc = [epub.Link("c1.xhtml", "One", "c1"), epub.Link("c2.xhtml", "Two", "c2")]
    book = read_book(make_epub(tmp_path / "s.epub", docs, toc))
    assert titles(book) == ["One", "Two"]
    assert words(book.chapters[0].text) == [
        "One",
        "Start",
        "Continued",
        "in",
        "a",
        "second",
        "file",
    ]


def test_spine_documents_out_of_the_reading_order_are_read_only_if_the_toc_names_them(tmp_path):
    docs = [
        doc("c1.xhtml", "<h1>One</h1><p>Start.</p>"),
        doc("pop.xhtml", "<p>A pop-up note, not part of the reading order.</p>"),
        doc("c2.xhtml", "<h1>Two</h1><p>End.</p>"),
        doc("map.xhtml", "<h1>Map</h1><p>Described in the appendix.</p>"),
    ]
    toc = [epub.Link(f"{n}.xhtml", n.title(), n) for n in ("c1", "c2", "map")]
    spine = ["nav", docs[0], (docs[1], "no"), docs[2], (docs[3], "no")]
    book = read_book(make_epub(tmp_path / "l.epub", docs, toc, spine=spine))
    assert titles(book) == ["C1", "C2", "Map"]
    assert words(book.chapters[0].text) == ["One", "Start"]


def test_notes_and_their_markers_are_not_read(tmp_path):
    body = (
        "<h1>Notes</h1>"
        '<p>A claim<a epub:type="noteref" href="#n1">1</a> and another'
        '<sup><a href="#n2">2</a></sup> and a third<a href="#n3">[3]</a>.</p>'
        '<aside epub:type="footnote" id="n1"><p>Source one.</p></aside>'
        '<div role="doc-endnote" id="n2"><p>Source two.</p></div>'
        '<ol epub:type="endnotes"><li id="n3">Source three.</li></ol>'
    )
    book = read_book(make_epub(tmp_path / "f.epub", [doc("f.xhtml", body, "Notes")]))
    assert book.chapters[0].text == "Notes\n\nA claim and another and a third."


def test_a_table_is_read_row_by_row_and_alt_text_is_not_read(tmp_path):
    body = (
        "<h1>Data</h1><table><tr><th>City</th><th>People</th></tr>"
        "<tr><td>Oslo</td><td>700,000</td></tr></table>"
        '<figure><img src="x.png" alt="a blurry photo of a harbour"/>'
        "<figcaption>The harbour at dawn.</figcaption></figure>"
        '<p>Text <img src="y.png" alt="decorative swirl"/>goes on.</p>'
    )
    book = read_book(make_epub(tmp_path / "t.epub", [doc("t.xhtml", body, "Data")]))
    assert book.chapters[0].text == (
        "Data\n\nCity, People\nOslo, 700,000\n\nThe harbour at dawn.\n\nText goes on."
    )


def test_a_chapter_with_nothing_to_say_is_dropped_with_a_warning(tmp_path, caplog):
    docs = [
        doc("c1.xhtml", "<h1>One</h1><p>Words.</p>", "One"),
        doc("plate.xhtml", '<img src="plate.png" alt="A map"/>', "Map of the Island"),
        doc("c2.xhtml", "<h1>Two</h1><p>More.</p>", "Two"),
    ]
    with caplog.at_level(logging.WARNING, logger="kokoro_say"):
        book = read_book(make_epub(tmp_path / "e.epub", docs))
    assert titles(book) == ["One", "Two"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ['1 chapter with nothing to say left out: "Map of the Island"']


def test_without_a_toc_chapters_are_the_spine_documents_first_headings(tmp_path):
    docs = [
        doc("c1.xhtml", "<h1>The Start</h1><p>Once.</p>"),
        doc("c2.xhtml", "<p>No heading here.</p>"),
        doc("c3.xhtml", "<div><h2>The End</h2><h2>Not a title</h2><p>Twice.</p></div>"),
    ]
    book = read_book(make_epub(tmp_path / "x.epub", docs, toc=[]))
    assert titles(book) == ["The Start", "The End"]
    assert words(book.chapters[0].text) == ["The", "Start", "Once", "No", "heading", "here"]


def test_a_book_protected_by_drm_is_refused(tmp_path):
    path = make_epub(tmp_path / "drm.epub", [doc("c1.xhtml", "<p>Secret.</p>")])
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/'
        'xmlenc#aes128-cbc"/><enc:CipherData><enc:CipherReference URI="EPUB/c1.xhtml"/>'
        "</enc:CipherData></enc:EncryptedData></encryption>"
    )
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("META-INF/encryption.xml", encryption)
    with pytest.raises(BookError, match=r"^drm\.epub is protected by DRM"):
        read_book(path)


def test_obfuscated_fonts_are_not_drm(tmp_path):
    path = make_epub(tmp_path / "font.epub", [doc("c1.xhtml", "<p>Open.</p>")])
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/'
        'embedding"/><enc:CipherData><enc:CipherReference URI="EPUB/fonts/a.otf"/>'
        "</enc:CipherData></enc:EncryptedData></encryption>"
    )
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("META-INF/encryption.xml", encryption)
    assert words(read_book(path).chapters[0].text) == ["Open"]


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04 not really a zip", b"%PDF-1.4"])
def test_a_file_that_is_no_epub_is_a_short_error(tmp_path, data):
    path = tmp_path / "broken.epub"
    path.write_bytes(data)
    with pytest.raises(BookError, match=r"^cannot read broken\.epub: it is not a valid EPUB"):
        read_book(path)


@st.composite
def toc_books(draw: st.DrawFn) -> tuple[list[list[str]], list[tuple[int, int | None]]]:
    """Documents of paragraphs (each a unique word), and TOC entries pointing at a
    document or at a paragraph's anchor, in any order, some twice."""
    docs = [
        [f"d{d}p{p}" for p in range(draw(st.integers(1, 4)))]
        for d in range(draw(st.integers(1, 4)))
    ]
    place = st.integers(0, len(docs) - 1).flatmap(
        lambda d: st.tuples(st.just(d), st.one_of(st.none(), st.integers(0, len(docs[d]) - 1)))
    )
    return docs, draw(st.lists(place, max_size=6))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(book=toc_books(), nested=st.booleans())
def test_a_toc_cuts_the_spine_into_chapters_that_read_every_paragraph_once(tmp_path, book, nested):
    paragraphs, places = book
    docs = [
        doc(f"f{d}.xhtml", "".join(f'<p id="a{p}">{w}.</p>' for p, w in enumerate(words)))
        for d, words in enumerate(paragraphs)
    ]
    links = [
        epub.Link(f"f{d}.xhtml" + ("" if p is None else f"#a{p}"), f"Entry {n}", f"e{n}")
        for n, (d, p) in enumerate(places)
    ]
    toc = [(epub.Section("Group", href=links[0].href), links[1:])] if nested and links else links
    read = read_book(make_epub(tmp_path / "p.epub", docs, toc))
    assert [w for c in read.chapters for w in words(c.text)] == [w for d in paragraphs for w in d]


def test_a_book_that_would_unpack_to_gigabytes_is_refused_before_it_is_unpacked(tmp_path):
    path = make_epub(tmp_path / "huge.epub", [doc("c1.xhtml", "<p>Small.</p>")])
    data = bytearray(path.read_bytes())
    entry = data.rindex(b"PK\x01\x02")  # the last file's entry in the central directory
    data[entry + 24 : entry + 28] = (3 << 30).to_bytes(4, "little")  # its size: 3 GiB
    path.write_bytes(bytes(data))
    with pytest.raises(BookError, match=r"^huge\.epub is too large to read"):
        read_book(path)


@pytest.mark.parametrize("nav", [False, True])
def test_a_contents_page_the_guide_names_is_not_read(tmp_path, nav):
    """EPUB 2 books (and EPUB 3 ones kept compatible) carry a contents page of links in
    the spine, named by the package's guide: it is the table of contents, not prose."""
    links = "".join(
        f'<p class="toc"><a href="{n}.xhtml">Chapter {n}</a></p>' for n in ("one", "two")
    )
    docs = [
        doc("contents.xhtml", f"<h1>Contents</h1>{links}", "Contents"),
        doc("one.xhtml", "<h1>Chapter One</h1><p>The first words.</p>", "Chapter One"),
        doc("two.xhtml", "<h1>Chapter Two</h1><p>The second words.</p>", "Chapter Two"),
    ]
    guide = [{"type": "toc", "href": "contents.xhtml", "title": "Contents"}]
    path = make_epub(tmp_path / "b.epub", docs, docs[1:], nav=nav, guide=guide)
    book = read_book(path)
    assert titles(book) == ["Chapter One", "Chapter Two"]
    assert [words(c.text) for c in book.chapters] == [
        ["Chapter", "One", "The", "first", "words"],
        ["Chapter", "Two", "The", "second", "words"],
    ]


def test_a_guide_pointing_into_a_page_of_prose_leaves_the_page_read(tmp_path):
    docs = [
        doc("all.xhtml", '<h1 id="c">Contents</h1><p>Prose stays here.</p>', "All"),
        doc("two.xhtml", "<h1>Two</h1><p>More prose.</p>", "Two"),
    ]
    guide = [{"type": "toc", "href": "all.xhtml#c", "title": "Contents"}]
    book = read_book(make_epub(tmp_path / "b.epub", docs, docs, nav=False, guide=guide))
    assert words(" ".join(c.text for c in book.chapters)) == [
        *("Contents", "Prose", "stays", "here", "Two", "More", "prose"),
    ]


def test_a_document_the_spine_lists_twice_is_read_once(tmp_path):
    """A spine may not list a document twice (epubcheck's OPF-034); a book that does
    is read in the order of each document's first place."""
    docs = [
        doc("one.xhtml", "<h1>Chapter One</h1><p>The first words.</p>", "Chapter One"),
        doc("two.xhtml", "<h1>Chapter Two</h1><p>The second words.</p>", "Chapter Two"),
    ]
    spine = ["nav", docs[0], docs[1], docs[0], docs[1]]
    book = read_book(make_epub(tmp_path / "b.epub", docs, spine=spine))
    assert titles(book) == ["Chapter One", "Chapter Two"]
    assert words(" ".join(c.text for c in book.chapters)) == [
        *("Chapter", "One", "The", "first", "words", "Chapter", "Two", "The", "second", "words"),
    ]


def test_many_toc_entries_at_one_place_title_it_by_the_first_few(tmp_path):
    """ "Book One", "Part One", "Chapter 1" at one place title one chapter; a table of
    contents with thousands of entries there (a broken or hostile book) made a title
    as long as all of them, joined at a cost that grew with its square."""
    docs = [doc("one.xhtml", "<h1>One</h1><p>Words.</p>", "One")]
    toc = [epub.Link("one.xhtml", f"Entry {n}", f"e{n}") for n in range(2000)]
    book = read_book(make_epub(tmp_path / "b.epub", docs, toc))
    assert titles(book) == ["Entry 0: Entry 1: Entry 2"]
