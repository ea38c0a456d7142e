"""Normalization passes run in order, each one contained.

A pass that raises on a piece (a bug no test found yet) must not cost the listener
the rest of the answer: that pass is skipped for that piece, with one warning naming
it, and the others read the piece as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

_LOGGER = logging.getLogger(__name__)

# A pass: its name (for the warning) and what it does to a piece.
Pass = tuple[str, Callable[[str], str]]


def run_passes(text: str, passes: Sequence[Pass], lang: str) -> str:
    """`text` through each pass in order; a pass that raises is left out for this text."""
    for name, apply in passes:
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
