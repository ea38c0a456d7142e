"""The fixed ranges of the generator's convolutions that run on int8 kernels
(`quantizing.py`), per published model file; written by `bench/int8_layers.py write`.

Measured on speech: the teaching sentences and replies (never a test's or the
benchmark's) in every embedded voice, decoded whole by today's generator; each
range holds the 99.999th percentile of the values seen on either side (the
rarer ones are clipped). Only the 0 convolutions whose sound survives fixed
ranges are listed (bench/RESULTS.md, Q); the others keep today's path.
"""

from __future__ import annotations

from wyoming_kokoro.catalog.files import BY_NAME
from wyoming_kokoro.synthesis.quantizing import Ranges, Span

_PREFIX, _SUFFIX = "/decoder/decoder/generator/", "/Conv_quant"

# Per model file (its sha256's head): convolution → (input range, output range).
_RANGES: dict[str, dict[str, tuple[tuple[float, float], tuple[float, float]]]] = {
    "6e742170d309016e": {},
}


def chosen_ranges(model_name: str) -> dict[str, Ranges]:
    """The convolutions of `model_name`'s generator to move onto int8 kernels, with
    their ranges (empty for a model without measured ones)."""
    known = BY_NAME.get(model_name)
    table = _RANGES.get(known.sha256[:16], {}) if known is not None else {}
    return {
        f"{_PREFIX}{name}{_SUFFIX}": Ranges(Span(*x), Span(*y)) for name, (x, y) in table.items()
    }
