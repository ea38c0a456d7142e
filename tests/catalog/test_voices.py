"""The voice catalog, blends and the languages voices are offered under."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.catalog.voices import (
    CATALOG,
    G2P_LANGUAGES,
    VoiceError,
    default_voice,
    describe_voice,
    g2p_language,
    parse_voice,
    spoken_locales,
)

INSTALLED = ("af_bella", "af_sky", "am_adam", "jm_kumo", "ff_siwis")


def test_catalog_has_the_54_upstream_voices_with_real_locales() -> None:
    assert len(CATALOG) == 54
    assert len({v.name for v in CATALOG}) == 54
    locales = {v.language.locale for v in CATALOG}
    assert locales == {
        "en_US",
        "en_GB",
        "es_ES",
        "fr_FR",
        "hi_IN",
        "it_IT",
        "ja_JP",
        "pt_BR",
        "zh_CN",
    }
    assert all(v.gender in ("female", "male") and v.grade for v in CATALOG)
    heart = describe_voice("af_heart")
    assert (heart.grade, heart.gender, heart.title) == (
        "A",
        "female",
        "Heart (American English, female)",
    )


def test_blend_weights_are_normalised() -> None:
    spec = parse_voice("af_bella(2)+af_sky(1)", INSTALLED)
    assert spec.parts == (("af_bella", pytest.approx(2 / 3)), ("af_sky", pytest.approx(1 / 3)))
    assert spec.primary == "af_bella"
    assert parse_voice(" af_bella + af_sky ", INSTALLED).parts == (
        ("af_bella", 0.5),
        ("af_sky", 0.5),
    )
    assert parse_voice("af_sky(1)+af_sky(3)", INSTALLED).parts == (("af_sky", 1.0),)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("af_bela", "did you mean af_bella"),
        ("nobody", "unknown voice 'nobody'"),
        ("af_bella(0)", "must be positive"),
        ("af_bella(2", "malformed voice"),
        ("../etc/passwd", "malformed voice"),
        ("", "empty voice"),
    ],
)
def test_bad_voice_specs_get_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(VoiceError, match=message.replace("(", r"\(")):
        parse_voice(spec, INSTALLED)


# A default install: the five embedded voices, the 54 upstream ones left to --download.
EMBEDDED = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")


@pytest.mark.parametrize("name", ["af_heart", "af_bella", "ff_siwis", "zm_yunxi"])
def test_an_upstream_voice_not_installed_is_named_with_the_way_to_get_it(name: str) -> None:
    with pytest.raises(VoiceError) as caught:
        parse_voice(f"jm_kumo(2)+{name}(1)", EMBEDDED)
    assert str(caught.value) == (
        f"{name} is one of Kokoro's 54 voices, not installed: run once with --download int8"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("af_bella(2)+", "an empty part after a '+'"),
        ("+jm_kumo", "an empty part before the first '+'"),
        ("jm_kumo++jf_alpha", "an empty part after a '+'"),
        ("af_bella(2x)", "the weight of af_bella must be a number"),
        ("af_bella(-1)", "weight of af_bella must be positive"),
        ("af_bella(2", "the weight of af_bella lacks its ')'"),
        ("af_bella(2)x+jm_kumo", "nothing may follow the weight of af_bella"),
    ],
)
def test_a_malformed_blend_says_what_is_malformed(spec: str, message: str) -> None:
    with pytest.raises(VoiceError) as caught:
        parse_voice(spec, EMBEDDED)
    assert message in str(caught.value)
    assert "unknown voice" not in str(caught.value)


_NAMES = {"jm_kumo": None, "jf_alpha": None, "af_bella": "not installed", "zz_nobody": "unknown"}
_WEIGHTS = {
    "": None,
    "(2)": None,
    " ( 0.5 ) ": None,
    "(0)": "positive",
    "(-1)": "positive",
    "(2x)": "must be a number",
    "()": "must be a number",
    "(2": "lacks its ')'",
    "(2)x": "nothing may follow",
}
_EXPECTED = {
    "not installed": "af_bella is one of Kokoro's 54 voices, not installed: "
    "run once with --download int8",
    "unknown": "unknown voice 'zz_nobody'",
}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["", "  "]),
            st.tuples(st.sampled_from(sorted(_NAMES)), st.sampled_from(sorted(_WEIGHTS))),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_blend_error_names_its_first_real_problem(
    parts: list[str | tuple[str, str]],
) -> None:
    """Malformed parts are found wherever they are, before any name is looked up."""
    spec = "+".join(p if isinstance(p, str) else p[0] + p[1] for p in parts)
    malformed = [
        "an empty part" if isinstance(p, str) else _WEIGHTS[p[1]]
        for p in parts
        if isinstance(p, str) or _WEIGHTS[p[1]]
    ]
    missing = [_NAMES[p[0]] for p in parts if not isinstance(p, str) and _NAMES[p[0]]]
    if not spec.strip():
        expected: str | None = "empty voice name"
    elif malformed:
        expected = malformed[0]
    elif missing:
        expected = _EXPECTED[str(missing[0])]
    else:
        expected = None
    if expected is None:
        assert parse_voice(spec, EMBEDDED).parts
        return
    with pytest.raises(VoiceError) as caught:
        parse_voice(spec, EMBEDDED)
    assert expected in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("af_bell jmkuo()+.0129eE-x \t"), max_size=30) | st.text())
def test_any_voice_text_is_a_voice_or_the_catalogs_own_error(spec: str) -> None:
    try:
        parsed = parse_voice(spec, EMBEDDED)
    except VoiceError as err:
        assert str(err) and "Traceback" not in str(err)
    else:
        assert {name for name, _ in parsed.parts} <= set(EMBEDDED)


def test_default_voice_prefers_af_heart_then_jm_kumo() -> None:
    assert default_voice(("af_heart", "jm_kumo")) == "af_heart"
    assert default_voice(("jf_alpha", "jm_kumo")) == "jm_kumo"
    assert default_voice(("zz_custom",)) == "zz_custom"


def test_language_follows_the_voice_unless_overridden() -> None:
    assert g2p_language(parse_voice("ff_siwis", INSTALLED)) == "fr-fr"
    # Japanese voices speak Japanese; their G2P reads text without kana as English.
    assert g2p_language(parse_voice("jm_kumo", INSTALLED)) == "ja"
    assert g2p_language(parse_voice("jm_kumo", INSTALLED), "今日は晴れです。") == "ja"
    assert g2p_language(parse_voice("jm_kumo", INSTALLED), "The door is open.") == "en-us"
    assert g2p_language(parse_voice("af_sky", INSTALLED), override="ja_JP") == "ja"
    assert g2p_language(parse_voice("jm_kumo", INSTALLED), override="zh-CN") == "zh"
    assert g2p_language(parse_voice("af_sky", INSTALLED), override="en_GB") == "en-gb"
    assert g2p_language(parse_voice("af_sky", INSTALLED), override="pt") == "pt-br"
    with pytest.raises(VoiceError, match="unsupported language"):
        g2p_language(parse_voice("af_sky", INSTALLED), override="klingon")


def test_voices_are_offered_where_they_can_speak() -> None:
    assert spoken_locales("af_heart") == ["en_US"]
    assert spoken_locales("bf_emma") == ["en_GB"]
    # Japanese and Chinese voices: their own language first, English as well.
    assert spoken_locales("jm_kumo") == ["ja_JP", "en_US", "en_GB"]
    assert spoken_locales("zf_xiaobei") == ["zh_CN", "en_US", "en_GB"]


# ---------------------------------------------------------------- blends print as they parse


def weight_text(weight: float) -> str:
    """A weight as a user would type it: positional, never an exponent."""
    return format(Decimal(repr(weight)), "f")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(INSTALLED),
            st.one_of(
                st.integers(1, 10**6).map(str),
                st.floats(1e-6, 1e6, allow_nan=False).map(weight_text),
                st.none(),
            ),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_a_parsed_blend_prints_as_a_spec_that_parses_back(
    parts: list[tuple[str, str | None]],
) -> None:
    spec = "+".join(name if weight is None else f"{name}({weight})" for name, weight in parts)
    parsed = parse_voice(spec, INSTALLED)
    again = parse_voice(str(parsed), INSTALLED)
    assert [name for name, _ in again.parts] == [name for name, _ in parsed.parts]
    assert [w for _, w in again.parts] == pytest.approx([w for _, w in parsed.parts], rel=1e-9)


def test_a_tiny_blend_weight_prints_without_an_exponent() -> None:
    spec = parse_voice("af_bella(1)+af_sky(20000)", INSTALLED)
    assert "e" not in str(spec).replace("af_bella", "").replace("af_sky", "")
    assert str(spec) == "af_bella(0.00004999750012499375)+af_sky(0.999950002499875)"
    assert parse_voice(str(spec), INSTALLED).parts[0][1] == pytest.approx(spec.parts[0][1])


@pytest.mark.parametrize("weight", ["9" * 400, "1e999", "1e308)+af_sky(1e308"])
def test_an_infinite_blend_weight_is_refused(weight: str) -> None:
    with pytest.raises(VoiceError, match="weight"):
        parse_voice(f"af_bella({weight})", INSTALLED)


# ---------------------------------------------------------------- language codes


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # Kokoro-FastAPI's lang_code letters (the voice names' first letters)
        ("a", "en-us"),
        ("b", "en-gb"),
        ("e", "es"),
        ("f", "fr-fr"),
        ("h", "hi"),
        ("i", "it"),
        ("p", "pt-br"),
        ("j", "ja"),
        ("z", "zh"),
        # Region codes, as BCP 47 or as Wyoming/Home Assistant locales
        ("es-ES", "es"),
        ("es_ES", "es"),
        ("es-419", "es"),
        ("it-IT", "it"),
        ("hi-IN", "hi"),
        ("fr-CA", "fr-fr"),
        ("pt-PT", "pt-br"),
        ("en-AU", "en-us"),
        ("en_GB", "en-gb"),
        ("zh-Hans-CN", "zh"),
        ("ja_JP", "ja"),
    ],
)
def test_language_codes_with_regions_and_kokoro_letters(code: str, expected: str) -> None:
    if expected not in G2P_LANGUAGES:
        pytest.skip(f"the {expected} G2P is not installed")
    assert g2p_language(parse_voice("af_sky", INSTALLED), override=code) == expected


@pytest.mark.parametrize("code", ["de-DE", "de", "x", "klingon", "-", "y-US"])
def test_languages_we_cannot_read_are_still_refused(code: str) -> None:
    with pytest.raises(VoiceError, match="unsupported language"):
        g2p_language(parse_voice("af_sky", INSTALLED), override=code)


@pytest.mark.parametrize(
    ("field", "code"), [("lang_code", "e"), ("lang_code", "es-ES"), ("language", "es_ES")]
)
def test_http_lang_code_reaches_the_reading_language(field: str, code: str) -> None:
    from wyoming_kokoro.server.http.request import Voices, parse_speech

    voices = Voices(installed=INSTALLED, default="af_sky", speed=1.0, max_text_chars=1000)
    request = parse_speech({"input": "Hola.", "voice": "af_sky", field: code}, voices)
    assert request.lang == "es"


@pytest.mark.parametrize(
    ("code", "written", "base"),
    [("en-us", "en-us", "en"), ("es_ES", "es-es", "es"), (" zh-Hans-CN", "zh-hans-cn", "zh"),
     ("JA", "ja", "ja"), ("fr-fr", "fr-fr", "fr")],
)  # fmt: skip
def test_language_codes_are_read_one_way(code: str, written: str, base: str) -> None:
    from wyoming_kokoro.catalog.voices import reading_language_of
    from wyoming_kokoro.text.g2p import base_language, language_code

    assert (language_code(code), base_language(code)) == (written, base)
    assert base_language(reading_language_of(code)) == base
