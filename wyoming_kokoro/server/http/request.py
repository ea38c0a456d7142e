"""The body of `POST /v1/audio/speech`, checked field by field as OpenAI defines it.

Kokoro-FastAPI's extensions are read too: `lang_code` (the reading language), voice
blends such as "af_bella(2)+af_sky(1)" and `normalization_options`; and our own
`sentence_pause` and `paragraph_pause` (milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wyoming_kokoro.audio import LONGEST_PAUSE_MS, Pauses
from wyoming_kokoro.catalog.voices import VoiceError
from wyoming_kokoro.options import SPEED, VOLUME_RANGE
from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.voicemap import openai_voice
from wyoming_kokoro.text.normalizing import Normalization, NormalizationError, from_options

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.presets import Choice
    from wyoming_kokoro.server.offer import Offer

# Names OpenAI clients send; all speak with the one Kokoro model.
MODELS = ("kokoro", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
OPENAI_SPEED = (0.25, 4.0)  # what OpenAI accepts


@dataclass(frozen=True)
class Voices:
    """What the request is checked against: the installed voices and defaults."""

    installed: tuple[str, ...]
    default: str
    speed: float  # the server's --speed: used when a request gives none
    max_text_chars: int
    offer: Offer | None = None  # voices and presets, kept current by the rescan
    volume: float = 1.0  # --volume
    lead_ms: int = 0
    tail_ms: int = 0
    pauses: Pauses = field(default_factory=Pauses)  # --sentence-pause, --paragraph-pause

    def current(self) -> Offer:
        from wyoming_kokoro.server.offer import Offer

        return self.offer or Offer(self.installed, {}, self.default, False)


@dataclass(frozen=True)
class SpeechRequest:
    text: str
    voice: str  # a voice or blend in parse_voice's canonical form
    lang: str
    speed: float
    response_format: str
    model: str
    volume: float = 1.0  # the preset's volume times volume_multiplier
    stream_format: str = "audio"
    preset: str | None = None
    words: bool = False  # return_timestamps: the words' times (captioned, or SSE events)
    stream: bool = True  # captioned speech: a JSON object per chunk, else one at the end
    # The request's, else the preset's, else the server's.
    pauses: Pauses = field(default_factory=Pauses)
    normalization: Normalization = field(default_factory=Normalization)
    lead_ms: int | None = None  # the preset's silence before the answer; None: the server's
    tail_ms: int | None = None


def _string(body: dict[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key)
    if value is None:  # absent or null: the default, if there is one
        value = default
    if value is None:
        raise ApiError(400, f"'{key}' is required", param=key, code="missing_required_parameter")
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' must be a string", param=key, code="invalid_type")
    return value


def _volume(body: dict[str, Any]) -> float:
    """Kokoro-FastAPI's volume_multiplier (1 = the equal loudness of every voice)."""
    value = body.get("volume_multiplier")
    if value is None:
        return 1.0
    low, high = VOLUME_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ApiError(
            400, "'volume_multiplier' must be a number", "volume_multiplier", "invalid_type"
        )
    if not low <= value <= high:
        raise ApiError(
            400,
            f"'volume_multiplier' must be between {low:g} and {high:g}",
            "volume_multiplier",
            "invalid_value",
        )
    return float(value)


def _speed(body: dict[str, Any], default: float) -> float:
    value = body.get("speed")
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ApiError(400, "'speed' must be a number", param="speed", code="invalid_type")
    low, high = OPENAI_SPEED
    if not low <= value <= high:
        raise ApiError(
            400, f"'speed' must be between {low} and {high}", param="speed", code="invalid_value"
        )
    # The model speaks well only in our own range (options.SPEED): clamp OpenAI's wider one.
    return min(max(float(value), SPEED.low or low), SPEED.high or high)


def _voice(body: dict[str, Any], voices: Voices) -> Choice:
    """The voice or blend (canonical), or preset, with its speed, volume and language."""
    raw = body.get("voice")
    if isinstance(raw, dict):  # newer OpenAI clients may send {"id": "..."}
        raw = raw.get("id")
    if raw is not None and not isinstance(raw, str):
        raise ApiError(400, "'voice' must be a string", param="voice", code="invalid_type")
    # Absent, null or empty: the server's default voice as the last rescan chose it
    # (OpenAI requires one; scripts often omit it, clients send null).
    name = raw or None
    offer = voices.current()
    # A preset of the user's wins over OpenAI's name.
    mapped = (
        None
        if name is None or name.strip() in offer.presets
        else openai_voice(name, offer.voice_names, offer.default_voice)
    )
    try:
        choice = offer.choose(mapped or name, voices.speed)
    except VoiceError as err:
        raise ApiError(400, f"{err}; see GET /v1/audio/voices", "voice", "voice_not_found") from err
    lang = body.get("lang_code") or body.get("language")
    if not isinstance(lang, str):
        return choice
    try:
        return offer.choose(mapped or name, voices.speed, lang)
    except VoiceError as err:
        raise ApiError(400, str(err), param="lang_code", code="invalid_value") from err


def _pause(body: dict[str, Any], key: str) -> int | None:
    """A pause in whole milliseconds (None: absent or null)."""
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ApiError(400, f"'{key}' must be a number of milliseconds", key, "invalid_type")
    if not 0 <= value <= LONGEST_PAUSE_MS:
        raise ApiError(
            400, f"'{key}' must be 0 to {LONGEST_PAUSE_MS} milliseconds", key, "invalid_value"
        )
    if value != int(value):  # 0.5 is a half second written in seconds, not 0 ms
        raise ApiError(
            400, f"'{key}' is whole milliseconds (500 for half a second)", key, "invalid_value"
        )
    return int(value)


def _pauses(body: dict[str, Any], choice: Choice, server: Pauses) -> Pauses:
    """The request's pauses, else its preset's, else the server's."""
    preset = server.over(choice.sentence_pause, choice.paragraph_pause)
    return preset.over(_pause(body, "sentence_pause"), _pause(body, "paragraph_pause"))


def _normalization(body: dict[str, Any]) -> Normalization:
    try:
        return from_options(body.get("normalization_options"))
    except NormalizationError as err:
        param = f"normalization_options.{err.key}" if err.key else "normalization_options"
        raise ApiError(400, str(err), param, "invalid_value") from None


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate, which JSON can escape but no UTF-8 encodes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ApiError(400, f"'{key}' must be true or false", param=key, code="invalid_type")
    return value


def parse_speech(body: Any, voices: Voices, captioned: bool = False) -> SpeechRequest:
    """Check a decoded JSON body; raises ApiError with OpenAI's status and wording.
    `captioned`: Kokoro-FastAPI's captioned speech, whose `return_timestamps` and
    `stream` are true unless said otherwise."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_json")
    model = _string(body, "model", "kokoro")
    if model not in MODELS:
        raise ApiError(
            404,
            f"the model '{model}' does not exist; use one of: {', '.join(MODELS)}",
            param="model",
            code="model_not_found",
        )
    text = _string(body, "input")
    if not _is_unicode(text):
        raise ApiError(
            400,
            "'input' holds half a surrogate pair (\\ud800-\\udfff alone)",
            "input",
            "invalid_value",
        )
    if not text.strip():
        raise ApiError(400, "'input' is empty", param="input", code="empty_input")
    if len(text) > voices.max_text_chars:
        raise ApiError(
            413,
            f"'input' is {len(text)} characters; the limit is {voices.max_text_chars}",
            param="input",
            code="input_too_long",
        )
    stream_format = body.get("stream_format") or "audio"
    if stream_format not in ("audio", "sse"):
        raise ApiError(
            400, "stream_format must be 'audio' or 'sse'", "stream_format", "invalid_value"
        )
    # Not a string: refused, rather than silently reading in the voice's own language.
    for key in ("lang_code", "language"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise ApiError(400, f"'{key}' must be a string", param=key, code="invalid_type")
    choice = _voice(body, voices)
    return SpeechRequest(
        text=text,
        voice=choice.voice,
        lang=choice.lang,
        speed=_speed(body, choice.speed),
        response_format=_string(body, "response_format", "mp3").lower(),
        model=model,
        volume=choice.volume * _volume(body),
        stream_format=stream_format,
        preset=choice.preset,
        words=_flag(body, "return_timestamps", captioned),
        stream=_flag(body, "stream", True),
        pauses=_pauses(body, choice, voices.pauses),
        normalization=_normalization(body),
        lead_ms=choice.lead_silence,
        tail_ms=choice.tail_silence,
    )
