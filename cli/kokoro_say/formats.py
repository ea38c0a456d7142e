"""Which audio format a run writes: --format, else the output's extension; and which
of them this machine's libsndfile can write."""

from __future__ import annotations

from pathlib import Path

import soundfile

# format name → (libsndfile major format, subtype)
FORMATS: dict[str, tuple[str, str]] = {
    "wav": ("WAV", "PCM_16"),
    "flac": ("FLAC", "PCM_16"),
    "ogg": ("OGG", "VORBIS"),
    "mp3": ("MP3", "MPEG_LAYER_III"),
}


def available_formats() -> list[str]:
    """The formats this machine's libsndfile can write (mp3 needs libsndfile >= 1.1)."""
    have = soundfile.available_formats()
    return [name for name, (fmt, _) in FORMATS.items() if fmt in have] + ["raw"]


# Extensions that name a format; any other (or none) needs --format.
_EXTENSIONS = {**{name: name for name in FORMATS}, "raw": "raw", "pcm": "raw"}


def format_for(path: str, explicit: str | None) -> str:
    """The output format: --format, else the file extension, else raw for stdout.
    A --format that contradicts the extension is refused (ValueError): the file
    would not play as what its name says."""
    ext = "" if path == "-" else Path(path).suffix.lower().lstrip(".")
    named = _EXTENSIONS.get(ext)
    if explicit:
        if named is not None and named != explicit.lower():
            raise ValueError(
                f"{Path(path).name} names a {named} file, but --format {explicit} was "
                "asked: change the name or leave --format out"
            )
        return explicit.lower()
    if path == "-":
        return "raw"
    if named is None:
        raise ValueError(f"cannot tell the audio format from {path!r}; use --format")
    return named
