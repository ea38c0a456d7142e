"""Normalization passes run in order, each one contained.

A pass that raises on a piece (a bug no test found yet) must not cost the listener
the rest of the answer: that pass is skipped for that piece, with one warning naming
it, and the others read the piece as usual.

A request may turn groups of passes off (text/normalizing.py's switches): `switched_off`
holds them off while its piece is planned, in this thread or task only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar

_LOGGER = logging.getLogger(__name__)

# Each switch's passes, by the names the languages give them (en.py, other.py).
SWITCHED: dict[str, tuple[str, ...]] = {
    "units": ("units", "quantities"),
    "urls": ("URLs", "domains"),
    "emails": ("e-mail addresses",),
    "phones": ("phones",),
    "symbols": ("symbols", "ampersands"),
}
_OFF: ContextVar[frozenset[str]] = ContextVar("passes_off", default=frozenset())


@contextlib.contextmanager
def switched_off(switches: Iterable[str]) -> Iterator[None]:
    """The passes of `switches` (SWITCHED's keys) left out of every run until the end."""
    token = _OFF.set(frozenset(name for s in switches for name in SWITCHED[s]))
    try:
        yield
    finally:
        _OFF.reset(token)


# A pass: its name (for the warning) and what it does to a piece.
Pass = tuple[str, Callable[[str], str]]


def run_passes(text: str, passes: Sequence[Pass], lang: str) -> str:
    """`text` through each pass in order; a pass that raises is left out for this text."""
    off = _OFF.get()
    for name, apply in passes:
        if name in off:
            continue
        try:
            text = apply(text)
        except Exception:  # any bug in one pass: the piece is still read
            _LOGGER.warning(
                "Normalizing %s: the %s pass failed on a piece and was skipped for it",
                lang,
                name,
                exc_info=True,
            )
    return text
