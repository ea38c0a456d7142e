"""The generator's convolutions moved onto QLinearConv (`quantizing.py`), on a tiny
graph built as the published int8 model quantizes a convolution: DynamicQuantizeLinear,
ConvInteger on uint8 weights, the bias quantized at run time, the result scaled."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from onnx import TensorProto, helper, numpy_helper

from wyoming_kokoro.synthesis import generator_choice, quantizing
from wyoming_kokoro.synthesis.quantizing import QuantizingError, Ranges, Span

CHANNELS, KERNEL = 4, 3


def _conv(prefix: str, source: str, quantized: tuple[str, str, str] | None) -> tuple[list, str]:
    """The int8 model's pattern for one convolution reading `source`; `quantized`: the
    outputs of a DynamicQuantizeLinear to share instead of making one."""
    nodes = []
    if quantized is None:
        quantized = (f"{prefix}/xq", f"{prefix}/xs", f"{prefix}/xz")
        nodes.append(helper.make_node("DynamicQuantizeLinear", [source], list(quantized)))
    xq, xs, xz = quantized
    p = prefix
    nodes += [
        helper.make_node(
            "ConvInteger",
            [xq, f"{p}.w", xz, f"{p}.wz"],
            [f"{p}/acc"],
            name=f"{p}/Conv_quant",
            pads=[1, 1],
        ),
        helper.make_node("Mul", [xs, f"{p}.ws"], [f"{p}/bias_scale"]),
        helper.make_node("Div", [f"{p}.bias", f"{p}/bias_scale"], [f"{p}/bias_div"]),
        helper.make_node("Floor", [f"{p}/bias_div"], [f"{p}/bias_floor"]),
        helper.make_node("Cast", [f"{p}/bias_floor"], [f"{p}/bias_int"], to=TensorProto.INT32),
        helper.make_node("Reshape", [f"{p}/bias_int", "shape"], [f"{p}/bias_r"]),
        helper.make_node("Add", [f"{p}/acc", f"{p}/bias_r"], [f"{p}/sum"]),
        helper.make_node("Cast", [f"{p}/sum"], [f"{p}/sumf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", [f"{p}/sumf", f"{p}/bias_scale"], [f"{p}/out"]),
    ]
    return nodes, f"{p}/out"


def _weights(prefix: str, rng: np.random.Generator) -> list[onnx.TensorProto]:
    w = rng.integers(0, 256, (CHANNELS, CHANNELS, KERNEL), dtype=np.uint8)
    return [
        numpy_helper.from_array(w, f"{prefix}.w"),
        numpy_helper.from_array(np.array(rng.integers(60, 200), np.uint8), f"{prefix}.wz"),
        numpy_helper.from_array(np.array(0.01, np.float32), f"{prefix}.ws"),
        numpy_helper.from_array(rng.standard_normal(CHANNELS).astype(np.float32), f"{prefix}.bias"),
    ]


def tiny(seed: int = 0) -> onnx.ModelProto:
    """x → conv a → conv b, and conv c reading x's quantization with a; a's input's
    scale and zero point are outputs too (as the fed generator's are)."""
    rng = np.random.default_rng(seed)
    a, out_a = _conv("a", "x", None)
    b, out_b = _conv("b", out_a, None)
    c, out_c = _conv("c", "x", ("a/xq", "a/xs", "a/xz"))
    inits = [numpy_helper.from_array(np.array([1, -1, 1], np.int64), "shape")]
    for p in "abc":
        inits += _weights(p, rng)
    graph = helper.make_graph(
        a + b + c,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, None])],
        [
            helper.make_tensor_value_info(out_b, TensorProto.FLOAT, None),
            helper.make_tensor_value_info(out_c, TensorProto.FLOAT, None),
            helper.make_tensor_value_info("a/xs", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("a/xz", TensorProto.UINT8, None),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def run(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, ["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def measured(model: onnx.ModelProto, x: np.ndarray) -> dict[str, Ranges]:
    """Each convolution's exact input and output range on `x`."""
    found = quantizing.convs(model)
    probe = quantizing.probed(model, found)
    values = dict(zip([o.name for o in probe.graph.output], run(probe, x), strict=True))

    def span(name: str) -> Span:
        return Span(float(values[name].min()), float(values[name].max()))

    return {c.name: Ranges(span(c.activation), span(c.output)) for c in found}


def test_the_convolutions_are_found_with_their_tensors() -> None:
    found = quantizing.convs(tiny())
    assert [c.name for c in found] == ["a/Conv_quant", "b/Conv_quant", "c/Conv_quant"]
    a, b, c = found
    assert (a.activation, a.output, a.bias, a.weight_scale) == ("x", "a/out", "a.bias", "a.ws")
    assert b.activation == "a/out" and c.quantized == a.quantized == "a/xq"


def test_a_float_model_has_none_to_move() -> None:
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="float")
    graph = helper.make_graph(
        [conv],
        "float",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((2, 2, 1), np.float32), "w")],
    )
    assert quantizing.convs(helper.make_model(graph)) == []


def test_every_convolution_moved_keeps_the_interface_and_the_sound() -> None:
    model = tiny()
    x = np.random.default_rng(1).standard_normal((1, CHANNELS, 64)).astype(np.float32)
    before = run(model, x)
    # In the bits this CPU's kernels sum without saturating (7 on x86 without VNNI:
    # with 8, this very test is off by a third of the range there).
    moved = quantizing.rewrite(tiny(), measured(model, x), generator_choice.weight_bits())
    ops = [n.op_type for n in moved.graph.node]
    assert ops.count("QLinearConv") == 3
    assert "ConvInteger" not in ops and "DynamicQuantizeLinear" not in ops
    assert [o.name for o in moved.graph.output] == [o.name for o in model.graph.output]
    after = run(moved, x)
    for old, new in zip(before[:2], after[:2], strict=True):
        # Within a few uint8 steps of the output's range: rounding, not a wrong wiring.
        assert np.abs(old - new).max() <= 0.05 * np.ptp(old), (old, new)
    # The fixed quantization's scale and zero point are what the fed generator outputs.
    assert after[2].shape == () and after[3].dtype == np.uint8


def test_a_quantization_another_kept_convolution_reads_is_kept() -> None:
    model = tiny()
    x = np.random.default_rng(2).standard_normal((1, CHANNELS, 32)).astype(np.float32)
    ranges = measured(model, x)
    moved = quantizing.rewrite(tiny(), {"a/Conv_quant": ranges["a/Conv_quant"]})
    ops = [n.op_type for n in moved.graph.node]
    assert ops.count("QLinearConv") == 1 and ops.count("ConvInteger") == 2
    assert ops.count("DynamicQuantizeLinear") == 2  # x's for c, a's output's for b
    assert np.allclose(run(moved, x)[1], run(model, x)[1])  # c untouched


def test_an_unknown_convolution_is_refused() -> None:
    with pytest.raises(QuantizingError):
        quantizing.rewrite(tiny(), {"nowhere": Ranges(Span(-1, 1), Span(-1, 1))})


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 6), st.integers(1, 4), st.integers(1, 5))),
    st.integers(0, 255),
)
def test_weights_per_channel_are_today_s_values_within_half_a_step(
    weight: np.ndarray, zero: int
) -> None:
    quantized, scales = quantizing._per_channel(weight, zero, 0.01)
    today = (weight.astype(np.float64) - zero) * 0.01
    moved = quantized.astype(np.float64) * scales.astype(np.float64).reshape(-1, 1, 1)
    assert np.all(np.abs(today - moved) <= scales.reshape(-1, 1, 1) / 2 + 1e-7)
    fits = np.abs(weight.astype(int) - zero).reshape(len(weight), -1).max(axis=1) <= 127
    assert np.allclose(today[fits], moved[fits], atol=1e-7)  # exact where they fit


@settings(max_examples=40, deadline=None)
@given(st.floats(-1e4, 1e4), st.floats(-1e4, 1e4))
def test_a_span_holds_zero_exactly_and_its_ends(low: float, high: float) -> None:
    span = Span(min(low, high), max(low, high))
    assert 0 <= span.zero <= 255 and span.scale > 0
    # Zero is a level (padding and silence stay exact); both ends are within the levels.
    level = round(0.0 / span.scale) + span.zero
    assert (level - span.zero) * span.scale == 0
    assert (255 - span.zero) * span.scale >= span.high - span.scale
    assert (0 - span.zero) * span.scale <= span.low + span.scale
