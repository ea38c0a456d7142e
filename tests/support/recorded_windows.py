"""The windows a cut model decodes for the engine, recorded as the engine gets them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Recorded:
    plans: list[dict[str, np.ndarray]] = field(default_factory=list)
    windows: list[np.ndarray] = field(default_factory=list)


@contextlib.contextmanager
def recorded_windows(cut: Any) -> Iterator[Recorded]:
    """Every plan `cut.windowed` is given and every window it yields, while inside."""
    made, decoded = Recorded(), cut.windowed

    def recorded(plan, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.plans.append(plan)
        for window, last in decoded(plan, *args, **kwargs):
            made.windows.append(window)
            yield window, last

    cut.windowed = recorded
    try:
        yield made
    finally:
        del cut.windowed
