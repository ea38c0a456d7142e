"""The fixed ranges of the generator's convolutions that run on int8 kernels
(`quantizing.py`), per published model file; written by `bench/int8_layers.py write`.

Measured on speech: the teaching sentences and replies (never a test's or the
benchmark's) in every embedded voice, decoded whole by today's generator; each
range holds the 99.999th percentile of the values seen on either side (the
rarer ones are clipped). Only the 32 convolutions whose sound survives fixed
ranges are listed (bench/RESULTS.md, Q); the others keep today's path.
"""

from __future__ import annotations

from wyoming_kokoro.catalog.files import BY_NAME
from wyoming_kokoro.synthesis.quantizing import Ranges, Span

_PREFIX, _SUFFIX = "/decoder/decoder/generator/", "/Conv_quant"

# Per model file (its sha256's head): convolution → (input range, output range).
_RANGES: dict[str, dict[str, tuple[tuple[float, float], tuple[float, float]]]] = {
    "6e742170d309016e": {
        "noise_convs.0": ((-3.14159, 3.14159), (-4.9599, 3.17616)),
        "noise_convs.1": ((-3.14159, 3.14159), (-0.688793, 1.25435)),
        "noise_res.0/convs1.0": ((-19.0062, 17.4762), (-15.0261, 16.5313)),
        "noise_res.0/convs1.1": ((-19.6014, 21.111), (-19.695, 12.346)),
        "noise_res.0/convs1.2": ((-11.885, 11.8816), (-8.8424, 6.37959)),
        "noise_res.0/convs2.0": ((-1.76661, 3.34136), (-0.916974, 0.817789)),
        "noise_res.0/convs2.1": ((-3.12636, 3.74327), (-2.08691, 1.77553)),
        "noise_res.0/convs2.2": ((-3.20091, 3.64012), (-1.90923, 2.89257)),
        "noise_res.1/convs1.0": ((-23.2171, 18.4705), (-25.7834, 25.388)),
        "noise_res.1/convs1.1": ((-6.72929, 11.8322), (-8.37259, 8.45764)),
        "noise_res.1/convs1.2": ((-4.90282, 8.48067), (-5.88024, 6.48313)),
        "noise_res.1/convs2.0": ((-4.5656, 4.59888), (-0.560761, 1.09027)),
        "noise_res.1/convs2.1": ((-1.93344, 2.56287), (-0.818236, 0.402665)),
        "noise_res.1/convs2.2": ((-1.45243, 1.96396), (-1.88138, 0.772504)),
        "resblocks.0/convs1.0": ((-9.51882, 11.7922), (-5.10677, 5.50145)),
        "resblocks.0/convs1.1": ((-8.5261, 8.94676), (-4.26159, 4.84208)),
        "resblocks.0/convs1.2": ((-9.38947, 11.5011), (-6.471, 7.16918)),
        "resblocks.0/convs2.0": ((-9.71792, 11.5117), (-11.7658, 10.7506)),
        "resblocks.0/convs2.1": ((-12.2799, 11.2773), (-10.7636, 13.12)),
        "resblocks.0/convs2.2": ((-15.9291, 20.1827), (-29.5886, 33.8391)),
        "resblocks.2/convs1.0": ((-10.574, 13.8232), (-8.57109, 8.4171)),
        "resblocks.2/convs1.1": ((-11.4723, 13.4753), (-6.13499, 10.3857)),
        "resblocks.2/convs1.2": ((-11.8399, 12.9597), (-7.59572, 8.89374)),
        "resblocks.2/convs2.0": ((-9.63569, 10.5592), (-9.72824, 9.11344)),
        "resblocks.2/convs2.1": ((-9.64003, 10.8774), (-11.0301, 10.9594)),
        "resblocks.2/convs2.2": ((-20.563, 32.7996), (-53.3166, 55.287)),
        "resblocks.3/convs1.0": ((-14.0409, 17.1044), (-8.87871, 8.55745)),
        "resblocks.3/convs1.1": ((-14.8113, 17.4038), (-10.9, 10.1839)),
        "resblocks.3/convs1.2": ((-12.063, 16.1176), (-10.8321, 12.9793)),
        "resblocks.3/convs2.0": ((-11.3662, 16.09), (-19.0182, 16.5361)),
        "resblocks.3/convs2.1": ((-10.0653, 13.0758), (-16.532, 40.1753)),
        "resblocks.3/convs2.2": ((-13.2466, 18.1206), (-23.2149, 93.6525)),
    },
}


def chosen_ranges(model_name: str) -> dict[str, Ranges]:
    """The convolutions of `model_name`'s generator to move onto int8 kernels, with
    their ranges (empty for a model without measured ones)."""
    known = BY_NAME.get(model_name)
    table = _RANGES.get(known.sha256[:16], {}) if known is not None else {}
    return {
        f"{_PREFIX}{name}{_SUFFIX}": Ranges(Span(*x), Span(*y)) for name, (x, y) in table.items()
    }
