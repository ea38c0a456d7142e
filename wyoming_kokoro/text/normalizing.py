"""What of the normalizer a request turns off: Kokoro-FastAPI's `normalization_options`.

Read at the HTTP door (light: the server imports no normalizer) and carried to the
worker by name with each piece (protocol.Piece), where text/normalize/passes.py turns
the passes of each named switch off while the piece is planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Our switches, each a group of the normalizer's passes (passes.SWITCHED).
SWITCHES = ("units", "urls", "emails", "phones", "symbols")

# Kokoro-FastAPI's options and the switch each one is; None: accepted, but nothing of
# ours does it ("(s)" is left as written either way).
KOKORO_FASTAPI: dict[str, str | None] = {
    "normalize": None,  # false: the text as written (--no-normalize for one request)
    "unit_normalization": "units",
    "url_normalization": "urls",
    "email_normalization": "emails",
    "phone_normalization": "phones",
    "replace_remaining_symbols": "symbols",
    "optional_pluralization_normalization": None,
    # A later Kokoro-FastAPI's: we never spell out a word for its capitals, and never
    # read an emoji aloud, whatever these say.
    "caps_normalization": None,
    "remove_emoji": None,
}


class NormalizationError(ValueError):
    """normalization_options that cannot be read; `key` names the one at fault."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Normalization:
    """How one request's text is normalized: at all, and with which switches off."""

    normalize: bool = True  # False: spoken as written (overlong runs still cut)
    off: tuple[str, ...] = ()  # SWITCHES turned off, in their order

    def __post_init__(self) -> None:
        unknown = set(self.off) - set(SWITCHES)
        if unknown:
            raise ValueError(f"unknown normalization switches: {sorted(unknown)}")


def from_options(options: Any) -> Normalization:
    """A request's normalization_options (a JSON object of true/false; null: none).
    Absent keys keep our normalizer as it is; NormalizationError names a bad key."""
    if options is None:
        return Normalization()
    if not isinstance(options, dict):
        raise NormalizationError("'normalization_options' must be an object", "")
    off: set[str] = set()
    for key, value in options.items():
        if key not in KOKORO_FASTAPI:
            known = ", ".join(KOKORO_FASTAPI)
            raise NormalizationError(
                f"'normalization_options' has no option '{str(key)[:40]}'; known: {known}", key
            )
        if value is None:
            continue
        if not isinstance(value, bool):
            raise NormalizationError(f"'normalization_options.{key}' must be true or false", key)
        switch = KOKORO_FASTAPI[key]
        if switch is not None and not value:
            off.add(switch)
    normalize = options.get("normalize") is not False
    return Normalization(normalize, tuple(s for s in SWITCHES if s in off))
