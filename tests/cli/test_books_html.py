"""Web pages and SSML files read into chapters (issue 58): an HTML page's chapters are
its h1/h2 headings, what is not prose is not read; an SSML file is one chapter spoken as
SSML."""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kokoro_say.book import BookError
from kokoro_say.books import read_book

WORD = re.compile(r"\w+")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def words(text: str) -> list[str]:
    return WORD.findall(text)


PAGE = """<!DOCTYPE html>
<html lang="fr"><head><title>Un essai</title><style>p { color: red }</style>
<script>var ignored = "never read";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<p>Avant&nbsp;propos &amp; merci.</p>
<h1>Premier</h1><p>Du texte <b>gras</b>,<br>une ligne.</p>
<pre><code>print("no")</code></pre>
<h2 id="x">Second <small>temps</small></h2><ul><li>un</li><li>deux</li></ul>
<aside>Publicité</aside>
</body></html>
"""


def test_a_pages_chapters_are_its_h1_and_h2_and_only_its_prose_is_read(tmp_path):
    book = read_book(write(tmp_path, "essai.html", PAGE))
    assert (book.title, book.language) == ("Un essai", "fr")
    assert [c.title for c in book.chapters] == ["Un essai", "Premier", "Second temps"]
    assert [c.text for c in book.chapters] == [
        "Avant propos & merci.",
        "Premier\n\nDu texte gras,\nune ligne.",
        "Second temps\n\nun\n\ndeux",
    ]


@pytest.mark.parametrize(
    "head",
    [
        '<meta charset="windows-1252">',
        '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
        '<?xml version="1.0" encoding="ISO-8859-1"?>',
    ],
)
def test_a_page_in_the_encoding_it_names_is_read_in_it(tmp_path, caplog, head):
    page = f"{head}<html><body><p>Un caf\u00e9 na\u00eff.</p></body></html>"
    path = tmp_path / "old.html"
    path.write_bytes(page.encode("latin-1"))
    with caplog.at_level(logging.WARNING, logger="kokoro_say"):
        book = read_book(path)
    assert book.chapters[0].text == "Un caf\u00e9 na\u00eff."
    assert not caplog.records


def test_a_table_whose_cells_hold_paragraphs_is_still_read_as_one_row_a_line(tmp_path):
    page = (
        "<table><tr><td><p>City</p></td><td><p>People</p></td></tr>"
        "<tr><td><p>Oslo</p></td><td><div>700,000</div></td></tr></table><p>After.</p>"
    )
    book = read_book(write(tmp_path, "t.html", page))
    assert book.chapters[0].text == "City, People\nOslo, 700,000\n\nAfter."
    # HTML lets rows and cells go without their end tags.
    page = "<table><tr><th>City<th>People<tr><td>Oslo<td>700,000</table><p>After."
    book = read_book(write(tmp_path, "u.html", page))
    assert book.chapters[0].text == "City, People\nOslo, 700,000\n\nAfter."


def test_ruby_text_is_not_read_twice_and_a_drop_cap_image_keeps_its_letter(tmp_path):
    page = (
        "<p><ruby>\u6f22\u5b57<rp>(</rp><rt>\u304b\u3093\u3058</rt><rp>)</rp></ruby>"
        "\u3092\u8aad\u3080\u3002</p>"
        '<p><img src="t.png" alt="T"/>he quick fox. <img src="fox.png" alt="A fox"/>Ran.</p>'
    )
    book = read_book(write(tmp_path, "r.html", page))
    assert book.chapters[0].text == "\u6f22\u5b57\u3092\u8aad\u3080\u3002\n\nThe quick fox. Ran."


def test_a_page_without_headings_is_one_chapter_named_by_its_title_or_file(tmp_path):
    book = read_book(write(tmp_path, "page.xhtml", "<p>Only this.</p>"))
    assert [(c.title, c.text) for c in book.chapters] == [("page", "Only this.")]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.text(max_size=300))
def test_any_html_reads_or_fails_with_a_book_error(tmp_path, data):
    with contextlib.suppress(BookError):
        read_book(
            write(
                tmp_path, "a.htm", data.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            )
        )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    paras=st.lists(
        st.lists(st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True), min_size=1, max_size=5),
        min_size=1,
        max_size=6,
    ),
    tags=st.lists(
        st.sampled_from(["p", "h1", "h2", "h3", "li", "div", "blockquote"]), min_size=6, max_size=6
    ),
)
def test_html_keeps_every_word_of_its_prose_once(tmp_path, paras, tags):
    body = "".join(f"<{t}>{' '.join(p)}</{t}>" for t, p in zip(tags, paras, strict=False))
    book = read_book(write(tmp_path, "p.html", f"<html><body>{body}</body></html>"))
    assert [w for c in book.chapters for w in words(c.text)] == [w for p in paras for w in p]


SSML = '<speak>Hello <break time="300ms"/> <say-as interpret-as="characters">TTS</say-as></speak>'


def test_an_ssml_file_is_one_chapter_spoken_as_ssml(tmp_path):
    book = read_book(write(tmp_path, "greeting.ssml", SSML))
    [chapter] = book.chapters
    assert (chapter.title, chapter.text, chapter.ssml) == ("greeting", SSML, True)


def test_ssml_is_forced_whatever_the_files_name(tmp_path):
    [chapter] = read_book(write(tmp_path, "g.txt", SSML), ssml=True).chapters
    assert chapter.ssml and chapter.text == SSML


def test_a_book_or_pdf_is_not_read_as_ssml(tmp_path):
    path = tmp_path / "book.epub"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(BookError, match=r"^book\.epub is an EPUB, not SSML"):
        read_book(path, ssml=True)


def test_ssml_that_declares_a_dtd_is_refused_before_anything_is_spoken(tmp_path):
    text = '<!DOCTYPE speak [<!ENTITY a "aaaa">]><speak>&a;</speak>'
    with pytest.raises(BookError, match=r"^cannot read bad\.ssml: "):
        read_book(write(tmp_path, "bad.ssml", text))


def test_what_the_page_hides_is_not_read(tmp_path):
    """What a reader does not see (the `hidden` attribute, an inline `display: none`)
    or a screen reader does not say (`aria-hidden`) is not heard either."""
    page = (
        "<html><body><p>Shown one.</p><div hidden><p>Gone.</p></div>"
        '<p style="color: red; DISPLAY : none !important">Gone.</p>'
        '<p>Shown <span aria-hidden="true">Gone</span>two.</p>'
        '<p style="display:block">Shown three.</p><p aria-hidden="false">Shown four.</p>'
        "</body></html>"
    )
    book = read_book(write(tmp_path, "p.html", page))
    assert words(book.chapters[0].text) == [
        *("Shown", "one", "Shown", "two", "Shown", "three", "Shown", "four"),
    ]
