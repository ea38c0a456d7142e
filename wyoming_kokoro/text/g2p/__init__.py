"""Language → phonemes: espeak-ng (bundled with kokoro-onnx), misaki, Japanese and
Chinese dictionaries, a user lexicon.

Japanese and Chinese load their dictionaries (Japanese's are large) on first use,
inside the worker: a burst that speaks only English never pays for them.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Callable
from pathlib import Path

from wyoming_kokoro.text.charsets import COMPAT_IDEOGRAPHS, HALFWIDTH_KANA, IDEOGRAPHS, KANA

_LOGGER = logging.getLogger(__name__)

LEXICON_NAME = "lexicon.txt"
# A lexicon is read on a describe (rescan), sent whole to every worker and compiled
# into one pattern every piece is matched against: a user's list, not a dictionary.
MAX_LEXICON_BYTES = 1_000_000
MAX_LEXICON_ENTRIES = 10_000
MAX_WARNINGS = 10  # per file; then one line counts the rest

# Kana, CJK ideographs, full-width forms: text the Japanese/Chinese G2P must read.
# Text without any (an English announcement to a Japanese voice) is read as English.
_CJK = re.compile(f"[{KANA}{IDEOGRAPHS}{COMPAT_IDEOGRAPHS}{HALFWIDTH_KANA}]")
CJK_LANGUAGES = ("ja", "zh")


def language_code(code: str) -> str:
    """A language code written as ours are: lower case, "-" between its parts (es_ES: es-es)."""
    return code.strip().lower().replace("_", "-")


def base_language(code: str) -> str:
    """The language without region or script: fr-fr, es_ES, zh-Hans-CN → fr, es, zh."""
    return language_code(code).split("-", 1)[0]


def has_cjk(text: str) -> bool:
    """Whether the text has kana or ideographs (needs the Japanese or Chinese G2P)."""
    return _CJK.search(text) is not None


def reading_language(text: str, lang: str) -> str:
    """The language a piece is really read in: Japanese and Chinese voices read text
    without kana or ideographs as (American) English."""
    if lang in CJK_LANGUAGES and not has_cjk(text):
        return "en-us"
    return lang


def lexicon_entry(line: str) -> tuple[str, str] | None:
    """One line of a lexicon as (word in lower case, pronunciation); None for a blank
    line or a comment; ValueError if it is not `word pronunciation`. The one place
    that says what a line means (the page's saves are checked by it too)."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    parts = line.split(None, 1)
    if len(parts) != 2:
        raise ValueError("expected 'word pronunciation'")
    return parts[0].lower(), parts[1].strip()


def load_lexicon(path: Path) -> dict[str, str]:
    """Read a pronunciation lexicon: one `word<TAB or spaces>pronunciation` per line.

    A pronunciation between slashes is phonemes (`Kokoro /kˈOkəɹO/`); anything else
    is a respelling that is read instead of the word (`HA  home assistant`).
    Lines starting with # are comments. A line that is malformed or not UTF-8 is
    skipped and logged as `path:N`: a typo must not stop the server (the add-on
    would restart into the same failure). A file longer than MAX_LEXICON_BYTES is
    not read, entries past MAX_LEXICON_ENTRIES are left out (one warning each).
    Raises OSError if the file cannot be read.
    """
    with path.open("rb") as handle:
        data = handle.read(MAX_LEXICON_BYTES + 1)
    if len(data) > MAX_LEXICON_BYTES:
        _LOGGER.warning(
            "%s: longer than %d bytes; not read (speaking without it)", path, MAX_LEXICON_BYTES
        )
        return {}
    data = data.removeprefix(codecs.BOM_UTF8)  # as Windows editors save it
    entries: dict[str, str] = {}
    skipped = 0

    def skip(number: int, why: str) -> None:
        nonlocal skipped
        skipped += 1
        if skipped <= MAX_WARNINGS:
            _LOGGER.warning("%s:%d: %s; skipped", path, number, why)

    # Line by line, so one line in another encoding costs only that line (a UTF-8
    # multi-byte sequence never holds a newline byte).
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as err:
            skip(number, f"not UTF-8 (byte {err.start + 1}). Save the file as UTF-8")
            continue
        try:
            entry = lexicon_entry(line)
        except ValueError as err:
            skip(number, str(err))
            continue
        if entry is None:
            continue
        word, pronunciation = entry
        if word not in entries and len(entries) >= MAX_LEXICON_ENTRIES:
            _LOGGER.warning(
                "%s:%d: more than %d entries; the rest left out", path, number, MAX_LEXICON_ENTRIES
            )
            break
        entries[word] = pronunciation
    if skipped > MAX_WARNINGS:
        _LOGGER.warning("%s: %d lines skipped in all", path, skipped)
    return entries


def load_lexicons(data_dirs: list[Path] | tuple[Path, ...]) -> dict[str, str]:
    """Merge `lexicon.txt` from every data dir; the first directory wins."""
    entries: dict[str, str] = {}
    for directory in reversed(data_dirs):
        path = directory / LEXICON_NAME
        if not path.is_file():
            continue
        try:
            entries.update(load_lexicon(path))
        except OSError as err:
            _LOGGER.error("Cannot read %s; speaking without it: %s", path, err)
    return entries


def _misaki_english(british: bool) -> Callable[[str], str] | None:
    """misaki's lexicon-based English G2P, only when spaCy's model is installed.

    misaki would otherwise download `en_core_web_sm` at run time, which we never do.
    """
    try:
        import spacy.util  # optional and heavy

        if not spacy.util.is_package("en_core_web_sm"):
            return None
        from misaki import en, espeak

        from wyoming_kokoro.text.g2p.espeak_guard import GuardedFallback

        fallback = GuardedFallback(espeak.EspeakFallback(british))
        g2p = en.G2P(trf=False, british=british, fallback=fallback)
    except Exception as err:  # any failure means: use espeak
        _LOGGER.debug("misaki English G2P unavailable: %s", err)
        return None
    return lambda text: g2p(text)[0]


ESPEAK = "espeak-ng"
# espeak-ng's own language for a piece the Japanese or Chinese G2P could not read.
_ESPEAK_LANGUAGE = {"ja": "ja", "zh": "cmn"}
_CJK_NAMES = {"ja": "the Japanese G2P", "zh": "the Chinese G2P"}


class Phonemizer:
    """Text (already normalized) → Kokoro phonemes for one language.

    Never raises on text: a G2P that fails on a piece hands it to espeak-ng, and a
    piece espeak-ng cannot read either is left out (one warning each), so one odd
    piece never costs the rest of an utterance.
    """

    def __init__(
        self,
        espeak: Callable[[str, str], str],
        lexicon: dict[str, str] | None = None,
        prefer_misaki: bool = True,
    ) -> None:
        from wyoming_kokoro.text.g2p.espeak_library import install

        install()  # before any espeak backend exists: no temporary copy per backend
        self._espeak_library = espeak
        self._lexicon = lexicon or {}
        self._pattern = (
            re.compile(
                r"(?<!\w)(" + "|".join(re.escape(w) for w in self._lexicon) + r")(?!\w)",
                re.IGNORECASE,
            )
            if self._lexicon
            else None
        )
        self._misaki: dict[str, Callable[[str], str] | None] = {}
        self._prefer_misaki = prefer_misaki
        self._cjk: dict[str, Callable[[str], str] | None] = {}  # None: it cannot load

    def _espeak(self, text: str, lang: str) -> str:
        """espeak-ng, given only text that cannot crash it (espeak_guard.py)."""
        from wyoming_kokoro.text.g2p.espeak_guard import safe_for_espeak

        return self._espeak_library(safe_for_espeak(text), _ESPEAK_LANGUAGE.get(lang, lang))

    def _cjk_backend(self, lang: str) -> Callable[[str], str] | None:
        """The Japanese or Chinese G2P, built on first use (None if it cannot be);
        Latin words go to English."""
        if lang not in self._cjk:
            english = lambda text: self._read(text, "en-us")  # noqa: E731
            backend: Callable[[str], str] | None
            try:
                if lang == "ja":
                    from wyoming_kokoro.text.g2p.ja import JapaneseG2P

                    backend = JapaneseG2P(english)
                else:
                    from wyoming_kokoro.text.g2p.zh import ChineseG2P

                    backend = ChineseG2P(english)
            except Exception as err:  # a broken install: espeak-ng still speaks
                _LOGGER.warning(
                    "%s cannot be loaded (%s); espeak-ng reads %s instead",
                    _CJK_NAMES[lang],
                    err,
                    lang,
                )
                backend = None
            self._cjk[lang] = backend
        return self._cjk[lang]

    def _backend(self, lang: str) -> tuple[str, Callable[[str], str]]:
        """The G2P that reads `lang` (the piece's reading language) and its name."""
        if lang in CJK_LANGUAGES:
            backend = self._cjk_backend(lang)
            if backend is not None:
                return _CJK_NAMES[lang], backend
        elif self._prefer_misaki and lang in ("en-us", "en-gb"):
            if lang not in self._misaki:
                self._misaki[lang] = _misaki_english(lang == "en-gb")
                if self._misaki[lang]:
                    _LOGGER.info("Using misaki English G2P for %s", lang)
            english = self._misaki[lang]
            if english is not None:
                return "misaki English", english
        return ESPEAK, lambda text: self._espeak(text, lang)

    def _read(self, text: str, lang: str) -> str:
        """`text` read by `lang`'s G2P, else by espeak-ng, else as nothing."""
        name, backend = self._backend(lang)
        try:
            return backend(text)
        except Exception as err:
            if name == ESPEAK:
                _LOGGER.warning("espeak-ng cannot read a piece (%s); it is left out", err)
                return ""
            _LOGGER.warning("%s cannot read a piece (%s); espeak-ng reads it instead", name, err)
        return self._espeak_or_nothing(text, lang)

    def _espeak_or_nothing(self, text: str, lang: str) -> str:
        try:
            return self._espeak(text, lang)
        except Exception as err:
            _LOGGER.warning("espeak-ng cannot read it either (%s); it is left out", err)
            return ""

    def __call__(self, text: str, lang: str) -> str:
        from wyoming_kokoro.text.g2p.inline import split

        parts = split(text)
        if len(parts) == 1 and not parts[0][1]:
            return self._words(text, lang)
        # Phonemes from SSML go in as written; the text around them is read as usual.
        said = [
            part.strip() if is_phonemes else self._words(part, lang) for part, is_phonemes in parts
        ]
        return " ".join(p for p in said if p)

    def readings(self, text: str, lang: str) -> list[tuple[str, str]]:
        """Japanese or Chinese text (normalized) as the G2P's words, each with its
        phonemes as read in the sentence (text/words.py times them). If the G2P
        fails, the text is one word, read by espeak-ng."""
        name, backend = self._backend(lang)
        if name != ESPEAK:
            try:
                return backend.readings(text)  # type: ignore[attr-defined,no-any-return]
            except Exception as err:
                _LOGGER.warning(
                    "%s cannot read a piece (%s); espeak-ng reads it instead", name, err
                )
        return [(text, self._espeak_or_nothing(text, lang))]

    def _words(self, text: str, lang: str) -> str:
        if not text.strip():
            return ""
        lang = reading_language(text, lang)
        if self._pattern is None:
            return self._read(text, lang).strip()
        out: list[str] = []
        last = 0
        for match in self._pattern.finditer(text):
            entry = self._lexicon[match.group(1).lower()]
            if entry.startswith("/") and entry.endswith("/") and len(entry) > 2:
                if text[last : match.start()].strip():
                    out.append(self._read(text[last : match.start()], lang))
                out.append(entry[1:-1])
                last = match.end()
            else:
                out.append(self._read(text[last : match.start()] + entry, lang) if entry else "")
                last = match.end()
        if text[last:].strip():
            out.append(self._read(text[last:], lang))
        return " ".join(p.strip() for p in out if p.strip())
