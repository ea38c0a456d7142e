"""OpenAI's voice names → installed Kokoro voices.

Clients built for OpenAI offer only its names (alloy, nova, …). Each maps to a
Kokoro voice of a similar kind: the namesake where Kokoro has one (af_alloy,
am_echo, bm_fable, af_nova, am_onyx), else a well-graded voice of the same
gender; and where only the embedded Japanese voices are installed, to the two
that speak English most clearly (jf_gongitsune, jm_kumo).
"""

from __future__ import annotations

_FEMALE_FALLBACK = ("af_heart", "af_bella", "bf_emma", "jf_gongitsune")
_MALE_FALLBACK = ("am_michael", "am_fenrir", "bm_george", "jm_kumo")

# First choice per OpenAI voice; the gender's fallbacks follow it.
OPENAI_VOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "alloy": ("af_alloy", _FEMALE_FALLBACK),
    "ash": ("am_puck", _MALE_FALLBACK),
    "ballad": ("bm_george", _MALE_FALLBACK),
    "coral": ("af_bella", _FEMALE_FALLBACK),
    "echo": ("am_echo", _MALE_FALLBACK),
    "fable": ("bm_fable", _MALE_FALLBACK),
    "nova": ("af_nova", _FEMALE_FALLBACK),
    "onyx": ("am_onyx", _MALE_FALLBACK),
    "sage": ("af_sarah", _FEMALE_FALLBACK),
    "shimmer": ("af_sky", _FEMALE_FALLBACK),
    "verse": ("am_michael", _MALE_FALLBACK),
    "marin": ("af_heart", _FEMALE_FALLBACK),
    "cedar": ("am_fenrir", _MALE_FALLBACK),
}


def openai_voice(name: str, installed: tuple[str, ...], default: str) -> str | None:
    """The installed voice an OpenAI voice name stands for; None if it is not one."""
    entry = OPENAI_VOICES.get(name.strip().lower())
    if entry is None:
        return None
    first, fallbacks = entry
    return next((v for v in (first, *fallbacks) if v in installed), default)


def voice_map(installed: tuple[str, ...], default: str) -> dict[str, str]:
    """Every OpenAI voice name with the voice it speaks here (for docs and /v1/audio/voices)."""
    return {name: openai_voice(name, installed, default) or default for name in OPENAI_VOICES}
