"""wyoming-kokoro: Kokoro-82M text to speech over the Wyoming protocol."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # pyproject.toml is the one place the version is written; the installed package's
    # metadata carries it (script/setup reinstalls when pyproject.toml changes). Read
    # on first use: importlib.metadata costs a cold worker tens of ms before its load.
    if name == "__version__":
        from importlib.metadata import version

        value = version("wyoming-kokoro")
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
