"""One convolution of the generator's slowest shape (128 → 128 channels, kernel 11) on
one thread, per onnxruntime kernel: what this CPU's int8 kernels are worth.

    .venv/bin/python bench/int8_kernels.py

GMAC/s of ConvInteger u8×u8 (the int8 model's path today), QLinearConv u8×s8 and
u8×u8, and float Conv; then whether QLinearConv u8×s8 sums full-range bytes exactly
(x86 without VNNI sums pairs of byte products in 16 bits, which saturate: the reason
`generator_choice.weight_bits` is 7 there). CPU time, so load matters less, but not nothing.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

C, K, T = 128, 11, 48_000
ATTRIBUTES = {"kernel_shape": [K], "pads": [5, 5], "dilations": [1]}
QLINEAR = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]


def session(node: Any, x_type: int, y_type: int, weights: dict[str, np.ndarray]) -> Any:
    graph = helper.make_graph(
        [node],
        "one",
        [helper.make_tensor_value_info("x", x_type, [1, C, None])],
        [helper.make_tensor_value_info("y", y_type, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, ["CPUExecutionProvider"])


def qlinear(weight: np.ndarray, weight_zero: np.ndarray, y_scale: float = 0.5) -> Any:
    node = helper.make_node("QLinearConv", QLINEAR, ["y"], **ATTRIBUTES)
    weights = {
        "xs": np.array(1.0 if y_scale > 1 else 0.02, np.float32),
        "xz": np.array(0 if y_scale > 1 else 128, np.uint8),
        "w": weight,
        "ws": np.full(C, 1.0 if y_scale > 1 else 0.01, np.float32),
        "wz": weight_zero,
        "ys": np.array(y_scale, np.float32),
        "yz": np.array(0 if y_scale > 1 else 128, np.uint8),
        "b": np.zeros(C, np.int32),
    }
    return session(node, TensorProto.UINT8, TensorProto.UINT8, weights)


def rate(name: str, run: Any, feed: dict[str, np.ndarray], times: int = 5) -> None:
    run.run(None, feed)
    began = time.process_time()
    for _ in range(times):
        run.run(None, feed)
    spent = (time.process_time() - began) / times
    print(f"{name}: {C * C * K * T / spent / 1e9:.1f} GMAC/s")


def main() -> None:
    rng = np.random.default_rng(0)
    x8 = {"x": rng.integers(0, 255, (1, C, T), dtype=np.uint8)}
    u8 = rng.integers(0, 255, (C, C, K), dtype=np.uint8)
    s8 = rng.integers(-127, 127, (C, C, K), dtype=np.int8)
    zero = np.array(128, np.uint8)
    integer = helper.make_node("ConvInteger", ["x", "w", "z", "z"], ["y"], **ATTRIBUTES)
    today = session(integer, TensorProto.UINT8, TensorProto.INT32, {"w": u8, "z": zero})
    rate("ConvInteger u8×u8 (today)", today, x8)
    rate("QLinearConv u8×s8", qlinear(s8, np.zeros(C, np.int8)), x8)
    rate("QLinearConv u8×u8", qlinear(u8, np.full(C, 128, np.uint8)), x8)
    conv = helper.make_node("Conv", ["x", "w"], ["y"], **ATTRIBUTES)
    weight = rng.standard_normal((C, C, K)).astype(np.float32)
    floats = session(conv, TensorProto.FLOAT, TensorProto.FLOAT, {"w": weight})
    rate("Conv float32", floats, {"x": rng.standard_normal((1, C, T)).astype(np.float32)})
    # 255 × 127 in every product: exact sums come out at 250 on this scale.
    full = qlinear(np.full((C, C, K), 127, np.int8), np.zeros(C, np.int8), 255 * 127 * C * K / 250)
    got = int(full.run(None, {"x": np.full((1, C, 64), 255, np.uint8)})[0][0, 0, 20])
    print(f"QLinearConv u8×s8 on full-range bytes: {got} (exact: 250)")


if __name__ == "__main__":
    main()
