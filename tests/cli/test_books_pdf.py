"""PDFs built here with fpdf2, read into chapters (issue 58): the outline gives the
chapters; running headers, page numbers and hyphenation at line ends are not read; a
PDF without text, or locked by a password, is a clear error."""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st
from kokoro_say.book import BookError
from kokoro_say.books import read_book
from kokoro_say.books.pdf_text import paragraphs, written
from PIL import Image

WORD = re.compile(r"[\w-]+")


class Printed(FPDF):
    """A book's pages with a running header and a page number at the foot."""

    running = True

    def header(self) -> None:
        if self.running:
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, "The Printed Book", align="C", new_x="LMARGIN", new_y="NEXT")
            self.ln(4)

    def footer(self) -> None:
        if self.running:
            self.set_y(-15)
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, str(self.page_no()), align="C")


def new_pdf(running: bool = True) -> Printed:
    pdf = Printed()
    pdf.running = running
    pdf.set_title("The Printed Book")
    pdf.set_author("Pat Printer")
    pdf.set_font("Helvetica", size=12)
    return pdf


def lines(pdf: FPDF, *texts: str) -> None:
    for text in texts:
        pdf.cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")


def heading(pdf: FPDF, title: str, level: int = 0) -> None:
    pdf.start_section(title, level=level)
    pdf.set_font("Helvetica", "B", 16)
    lines(pdf, title)
    pdf.set_font("Helvetica", size=12)


def save(pdf: FPDF, path: Path) -> Path:
    pdf.output(str(path))
    return path


def words(text: str) -> list[str]:
    return WORD.findall(text)


def test_chapters_come_from_the_outline_and_start_at_their_heading(tmp_path):
    pdf = new_pdf()
    pdf.add_page()
    lines(pdf, "A title page line.")
    heading(pdf, "Chapter One")
    lines(pdf, "The first chapter starts on the title page.")
    pdf.add_page()
    lines(pdf, "It goes on on the next page.")
    heading(pdf, "A Part", level=0)
    heading(pdf, "Chapter Two", level=1)
    lines(pdf, "The second chapter.")
    pdf.add_page()
    lines(pdf, "Its end.")
    book = read_book(save(pdf, tmp_path / "book.pdf"))
    assert (book.title, book.author) == ("The Printed Book", "Pat Printer")
    assert [c.title for c in book.chapters] == [
        "The Printed Book",
        "Chapter One",
        "A Part: Chapter Two",
    ]
    assert [words(c.text) for c in book.chapters] == [
        ["A", "title", "page", "line"],
        [
            "Chapter",
            "One",
            "The",
            "first",
            "chapter",
            "starts",
            "on",
            "the",
            "title",
            "page",
            "It",
            "goes",
            "on",
            "on",
            "the",
            "next",
            "page",
        ],
        ["A", "Part", "Chapter", "Two", "The", "second", "chapter", "Its", "end"],
    ]


def test_running_headers_and_page_numbers_are_not_read(tmp_path):
    pdf = new_pdf()
    for n in range(4):
        pdf.add_page()
        lines(pdf, f"Page {n} has words of its own.")
    book = read_book(save(pdf, tmp_path / "pages.pdf"))
    assert [words(c.text) for c in book.chapters] == [
        [w for n in range(4) for w in f"Page {n} has words of its own".split()]
    ]


def test_hyphens_at_line_ends_are_joined_unless_the_word_has_one(tmp_path):
    pdf = new_pdf(running=False)
    pdf.add_page()
    lines(
        pdf,
        "A well-known rule: in this exam-",
        "ple the word was cut, and this well-",
        "known one was not; Jean-",
        "Paul Sartre agrees with every-",
        "one here, as do twenty-",
        "two others.",
    )
    book = read_book(save(pdf, tmp_path / "h.pdf"))
    assert book.chapters[0].text == (
        "A well-known rule: in this example the word was cut, and this well-known one was "
        "not; Jean-Paul Sartre agrees with everyone here, as do twenty-two others."
    )


def test_lines_join_into_paragraphs_that_end_where_a_short_line_ends_a_sentence(tmp_path):
    pdf = new_pdf(running=False)
    pdf.add_page()
    lines(
        pdf,
        "This paragraph is long enough to wrap across the page width and goes",
        "on to a second line that ends it.",
        "A new paragraph starts here and is also long enough to wrap across",
        "the page.",
    )
    text = read_book(save(pdf, tmp_path / "p.pdf")).chapters[0].text
    assert text.split("\n\n") == [
        "This paragraph is long enough to wrap across the page width and goes on to a second "
        "line that ends it.",
        "A new paragraph starts here and is also long enough to wrap across the page.",
    ]


def test_a_pdf_without_an_outline_is_one_chapter_named_by_its_title(tmp_path):
    pdf = new_pdf(running=False)
    pdf.add_page()
    lines(pdf, "Just words.")
    book = read_book(save(pdf, tmp_path / "x.pdf"))
    assert [(c.title, c.text) for c in book.chapters] == [("The Printed Book", "Just words.")]


def test_without_an_outline_chapter_lines_the_text_shows_start_chapters(tmp_path):
    pdf = new_pdf()
    pdf.add_page()
    lines(pdf, "Contents", "Chapter 1: Rain .... 2", "Chapter 2: Sun .... 3", "Chapter 3 .... 3")
    pdf.add_page()
    lines(
        pdf,
        "Chapter 1: Rain",
        "It rained all day, and the talk of the town was of",
        "Part 2 of the",
    )
    lines(pdf, "harvest, which was lost.")
    pdf.add_page()
    lines(pdf, "Chapter 2", "The Morning", "The sun came out.", "Chapter 3", "The end.")
    book = read_book(save(pdf, tmp_path / "plain.pdf"))
    assert [c.title for c in book.chapters] == [
        "The Printed Book",
        "Chapter 1: Rain",
        "Chapter 2: The Morning",
        "Chapter 3",
    ]
    assert book.chapters[1].text == (
        "Chapter 1: Rain\n\n"
        "It rained all day, and the talk of the town was of Part 2 of the harvest, which was lost."
    )


def test_a_scanned_pdf_without_text_says_to_run_ocr(tmp_path):
    pdf = new_pdf(running=False)
    pdf.add_page()
    scan = io.BytesIO()
    Image.new("L", (60, 80), 200).save(scan, format="PNG")
    pdf.image(scan, x=10, y=10, w=180)
    with pytest.raises(BookError, match=r"^scan\.pdf has no text layer.*OCR"):
        read_book(save(pdf, tmp_path / "scan.pdf"))


def test_a_pdf_locked_by_a_password_is_refused_and_one_only_restricted_is_read(tmp_path):
    locked = new_pdf(running=False)
    locked.add_page()
    lines(locked, "Secret words.")
    locked.set_encryption(owner_password="owner", user_password="user")
    with pytest.raises(BookError, match=r"^locked\.pdf is protected by a password"):
        read_book(save(locked, tmp_path / "locked.pdf"))
    restricted = new_pdf(running=False)
    restricted.add_page()
    lines(restricted, "Open words.")
    restricted.set_encryption(owner_password="owner")
    assert words(read_book(save(restricted, tmp_path / "r.pdf")).chapters[0].text) == [
        "Open",
        "words",
    ]


@pytest.mark.parametrize("data", [b"", b"%PDF-1.7\n garbage", b"PK\x03\x04"])
def test_a_file_that_is_no_pdf_is_a_short_error(tmp_path, data):
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(BookError, match=r"^cannot read bad\.pdf: it is not a valid PDF"):
        read_book(path)


_PDF_LINE = st.lists(
    st.one_of(
        st.from_regex(r"[A-Za-z]{1,9}", fullmatch=True),
        st.from_regex(r"[A-Za-z]{1,6}-", fullmatch=True),
        st.sampled_from(["well-known", "the end.", "12", "Jean-", "Paul", "—", "x-"]),
    ),
    min_size=1,
    max_size=8,
).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(_PDF_LINE, max_size=12))
def test_joining_lines_loses_and_adds_no_letter(lines):
    """Whatever the lines, paragraphs hold the same letters in the same order: only
    spaces, line ends and hyphens at a line's end may change."""
    out = paragraphs(lines, written(lines))
    assert re.sub(r"\W", "", "".join(out)) == re.sub(r"\W", "", "".join(lines))
    assert all(p.strip() == p and p for p in out)


def test_a_flaw_pypdf_reads_past_is_no_warning_for_the_listener(tmp_path, caplog):
    pdf = new_pdf(running=False)
    pdf.add_page()
    lines(pdf, "Flawed words.")
    data = bytes(pdf.output())
    offset = re.search(rb"startxref\s+(\d+)", data)
    assert offset is not None
    flawed = data[: offset.start(1)] + b"%d" % (int(offset[1]) + 7) + data[offset.end(1) :]
    path = tmp_path / "flawed.pdf"
    path.write_bytes(flawed)
    with caplog.at_level(logging.WARNING):
        book = read_book(path)
    assert book.chapters[0].text == "Flawed words."
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def aes_restricted(path: Path) -> Path:
    """A PDF only restricted by its owner, encrypted with AES as most such files are."""
    from fpdf.enums import EncryptionMethod

    pdf = new_pdf(running=False)
    pdf.add_page()
    lines(pdf, "Open words.")
    pdf.set_encryption(owner_password="owner", encryption_method=EncryptionMethod.AES_128)
    return save(pdf, path)


def test_a_pdf_restricted_with_aes_is_read(tmp_path):
    book = read_book(aes_restricted(tmp_path / "aes.pdf"))
    assert book.chapters[0].text == "Open words."


def test_without_a_cipher_library_an_aes_pdf_is_a_clear_error(tmp_path):
    path = aes_restricted(tmp_path / "aes.pdf")
    code = (
        "import sys\n"
        "sys.modules['cryptography'] = sys.modules['Crypto'] = None\n"
        "from pathlib import Path\n"
        "from kokoro_say.book import BookError\n"
        "from kokoro_say.books import read_book\n"
        "try:\n"
        f"    read_book(Path({str(path)!r}))\n"
        "except BookError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "aes.pdf is encrypted with AES and this installation cannot decrypt it "
        "(the cryptography package is missing)"
    )


def built_pdf(contents: list[bytes]) -> bytes:
    """A PDF of one page per content stream, its cross-reference table right, so pypdf
    reads it without repairs (a stream given here may be anything)."""
    font = b"/Resources<</Font<</F1<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>>>>>"
    kids = b" ".join(b"%d 0 R" % (3 + 2 * n) for n in range(len(contents)))
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[%s]/Count %d>>" % (kids, len(contents)),
    ]
    for n, stream in enumerate(contents):
        objects.append(
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 600 800]/Contents %d 0 R%s>>"
            % (4 + 2 * n, font)
        )
        objects.append(b"<</Length %d>>stream\n%s\nendstream" % (len(stream), stream))
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def shown(text: str) -> bytes:
    return b"BT /F1 12 Tf 72 700 Td (%s) Tj ET" % text.encode("ascii")


# Content streams pypdf cannot take apart: a dictionary, an inline image cut off, a
# string closed before it opened.
_BROKEN_STREAMS = [
    b"BT /F1 12 Tf 72 700 Td <<<<< [ ( Tj TJ ET",
    b"BT /F1 12 Tf 72 700 Td (Lost.) Tj ET BI /W 1 /H 1 /BPC 8 /CS /G ID",
    b"BT /F1 12 Tf ) Tj ET",
]


@pytest.mark.parametrize("broken", _BROKEN_STREAMS)
def test_a_page_that_cannot_be_read_is_left_out_with_a_warning_naming_it(tmp_path, caplog, broken):
    path = tmp_path / "torn.pdf"
    path.write_bytes(built_pdf([shown("First page words."), broken, shown("Third page words.")]))
    with caplog.at_level(logging.WARNING):
        book = read_book(path)
    assert words(" ".join(c.text for c in book.chapters)) == [
        *("First", "page", "words", "Third", "page", "words"),
    ]
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "page 2" in warned[0] and "torn.pdf" in warned[0]


def test_a_pdf_whose_pages_cannot_be_read_or_that_has_none_is_a_short_error(tmp_path):
    path = tmp_path / "torn.pdf"
    path.write_bytes(built_pdf([_BROKEN_STREAMS[0]]))
    with pytest.raises(BookError, match=r"^cannot read torn\.pdf: it is not a valid PDF"):
        read_book(path)
    path.write_bytes(built_pdf([]))
    with pytest.raises(BookError, match=r"^torn\.pdf has no pages$"):
        read_book(path)
