"""A yardstick for the log-mel gate: the generator with its source's STFT computed as
a convolution instead of onnxruntime's STFT operator.

Both are the same transform; the convolution's values are closer to numpy's FFT
(max error ~1e-7 against ~6e-7 for the operator). Where a bin's imaginary part
should be zero (the DC and Nyquist bins) the operator leaves rounding noise, mostly
positive, so the exported atan2 gives the phase +π there, as the model was trained
with; an exact zero would give -π in the export. The convolution adds 1e-7 to those
two bins so it agrees with that. What the whole decode then moves by is how far
the model's audio moves under rounding in one operator.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def conv_stft_generator(generator: Path, threads: int) -> Any:
    """An onnxruntime session of `generator` with its STFT rewritten as a Conv."""
    import onnx
    from onnx import helper, numpy_helper

    from wyoming_kokoro.synthesis.runtime import create_session

    model = onnx.load(str(generator))
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    nodes = list(model.graph.node)
    index = next(i for i, n in enumerate(nodes) if n.op_type == "STFT")
    signal, step, window, length = nodes[index].input
    size = int(values[length])
    angle = 2 * np.pi * ((np.arange(size // 2 + 1)[:, None] * np.arange(size)) % size) / size
    win = values[window].astype(np.float64)
    basis = np.concatenate([win * np.round(np.cos(angle), 12), -win * np.round(np.sin(angle), 12)])
    bias = np.zeros(len(basis), np.float32)
    bias[size // 2 + 1] = bias[-1] = 1e-7  # the DC and Nyquist bins' phase: +π, not -π
    for name, value in (
        ("conv_stft/basis", basis[:, None, :].astype(np.float32)),
        ("conv_stft/bias", bias),
        ("conv_stft/flat", np.array([0, 1, -1], np.int64)),
        ("conv_stft/bins", np.array([0, 2, size // 2 + 1, -1], np.int64)),
    ):
        model.graph.initializer.append(numpy_helper.from_array(value, name))
    nodes[index : index + 1] = [
        helper.make_node("Reshape", [signal, "conv_stft/flat"], ["conv_stft/signal"]),
        helper.make_node(
            "Conv",
            ["conv_stft/signal", "conv_stft/basis", "conv_stft/bias"],
            ["conv_stft/frames"],
            strides=[int(values[step])],
        ),
        helper.make_node("Reshape", ["conv_stft/frames", "conv_stft/bins"], ["conv_stft/parts"]),
        # [batch, real and imaginary, bins, frames] → the operator's [batch, frames, bins, 2]
        helper.make_node(
            "Transpose", ["conv_stft/parts"], [nodes[index].output[0]], perm=[0, 3, 2, 1]
        ),
    ]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "generator-conv-stft.onnx"
        onnx.save(model, str(path))
        return create_session(str(path), threads, None)
