"""The generator's convolutions moved onto onnxruntime's fast int8 kernels (`QLinearConv`).

The published int8 model quantizes each convolution's input at run time
(`DynamicQuantizeLinear` and `ConvInteger`, uint8 × uint8, then the bias and scales in
float). Where the kernels for that are slow and those for `QLinearConv` (uint8
activations, int8 weights per output channel) are fast, a convolution with fixed
ranges for its input and output runs several times quicker. The ranges are measured
once on speech (`bench/int8_layers.py`) and kept in `int8_ranges.py`; the
convolutions that sound different on fixed ranges keep today's path.

`rewrite` changes the generator part of the cut (`graph.py`) in place of each chosen
convolution and keeps its interface: the same inputs and outputs, so windows are fed
as before; a fixed quantization's scale and zero point are outputs that never change,
and feeding them changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyoming_kokoro.synthesis.graph import prune

if TYPE_CHECKING:
    import numpy as np
    import onnx

_LEVELS = 255  # uint8 activations


class QuantizingError(ValueError):
    """The generator is not quantized as the published int8 model's is."""


@dataclass(frozen=True)
class Conv:
    """One dynamically quantized convolution of the generator, by its tensors' names."""

    name: str  # the ConvInteger node
    activation: str  # the float tensor it quantizes
    output: str  # the float tensor it makes: bias added, scaled
    quantized: str  # the activation quantized (read by the ConvInteger)
    weight: str  # uint8, one scale and zero point for the whole tensor
    weight_zero: str
    weight_scale: str
    bias: str  # float, one per output channel


@dataclass(frozen=True)
class Span:
    """A fixed range of a tensor's values, as uint8 levels."""

    low: float
    high: float

    @property
    def scale(self) -> float:
        low, high = min(self.low, 0.0), max(self.high, 0.0)  # zero is exact
        return max(high - low, 1e-8) / _LEVELS

    @property
    def zero(self) -> int:
        return int(min(_LEVELS, max(0, round(-min(self.low, 0.0) / self.scale))))


@dataclass(frozen=True)
class Ranges:
    """A convolution's fixed ranges: its input and its output."""

    activation: Span
    output: Span


def convs(model: onnx.ModelProto) -> list[Conv]:
    """The generator's dynamically quantized convolutions, in graph order (empty for a
    float model: nothing to move)."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    initializers = {i.name for i in graph.initializer}
    found = []
    for node in graph.node:
        if node.op_type != "ConvInteger":
            continue
        try:
            found.append(_conv(node, producer, readers, initializers))
        except (KeyError, IndexError, StopIteration) as err:
            raise QuantizingError(f"{node.name} is not quantized as expected") from err
    return found


def _conv(
    node: onnx.NodeProto,
    producer: dict[str, onnx.NodeProto],
    readers: dict[str, list[onnx.NodeProto]],
    initializers: set[str],
) -> Conv:
    quantizer = producer[node.input[0]]
    add = _only(readers[node.output[0]], "Add")
    cast = _only(readers[add.output[0]], "Cast")
    scaled = _only(readers[cast.output[0]], "Mul")
    bias_scale = producer[next(i for i in scaled.input if i != cast.output[0])]
    weight_scale = next(i for i in bias_scale.input if i in initializers)
    bias = _float_bias(producer[next(i for i in add.input if i != node.output[0])], producer)
    return Conv(
        name=node.name,
        activation=_activation(quantizer),
        output=scaled.output[0],
        quantized=node.input[0],
        weight=node.input[1],
        weight_zero=node.input[3],
        weight_scale=weight_scale,
        bias=bias,
    )


def _only(nodes: list[onnx.NodeProto], op: str) -> onnx.NodeProto:
    if len(nodes) != 1 or nodes[0].op_type != op:
        raise KeyError(op)
    return nodes[0]


def _activation(quantizer: onnx.NodeProto) -> str:
    """The float tensor a DynamicQuantizeLinear, or `graph.py`'s If around one, reads."""
    if quantizer.op_type == "DynamicQuantizeLinear":
        return str(quantizer.input[0])
    if quantizer.op_type == "If":
        branch = next(a.g for a in quantizer.attribute if a.name == "else_branch")
        return str(_only(list(branch.node), "DynamicQuantizeLinear").input[0])
    raise KeyError(quantizer.op_type)


def _float_bias(start: onnx.NodeProto, producer: dict[str, onnx.NodeProto]) -> str:
    """The float bias the quantized one was computed from (Reshape ← Cast ← Floor ← Div)."""
    node = start
    while node.op_type != "Div":
        node = producer[node.input[0]]
    return str(node.input[0])


def probed(model: onnx.ModelProto, found: Iterable[Conv]) -> onnx.ModelProto:
    """A copy of `model` that also outputs each convolution's float input and output,
    for measuring their ranges."""
    import onnx
    from onnx import helper

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    present = {o.name for o in copy.graph.output}
    for conv in found:
        for name in (conv.activation, conv.output):
            if name not in present:
                present.add(name)
                copy.graph.output.append(
                    helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
                )
    return copy


def rewrite(model: onnx.ModelProto, chosen: Mapping[str, Ranges], bits: int = 8) -> onnx.ModelProto:
    """`model` (changed in place, and returned) with each convolution named in `chosen`
    as QuantizeLinear → QLinearConv → DequantizeLinear on its fixed ranges, its weights
    in `bits` bits; what only its old path used is removed."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    by_name = {c.name: c for c in convs(model)}
    unknown = sorted(set(chosen) - set(by_name))
    if unknown:
        raise QuantizingError(f"no convolution {unknown[0]}")
    values = {i.name: i for i in graph.initializer}

    def array(name: str) -> np.ndarray:
        return numpy_helper.to_array(values[name])

    new_inits = []
    replaced: dict[str, list[onnx.NodeProto]] = {}
    for name, ranges in chosen.items():
        conv = by_name[name]
        node = next(n for n in graph.node if n.name == name)
        weight, scales = _per_channel(
            array(conv.weight), int(array(conv.weight_zero)), float(array(conv.weight_scale)), bits
        )
        x, y = ranges.activation, ranges.output
        bias = np.round(array(conv.bias) / (x.scale * scales)).astype(np.int32)
        p = f"{name}/int8"
        new_inits += [
            numpy_helper.from_array(weight, f"{p}/weight"),
            numpy_helper.from_array(scales.astype(np.float32), f"{p}/weight_scale"),
            numpy_helper.from_array(np.zeros(len(scales), np.int8), f"{p}/weight_zero"),
            numpy_helper.from_array(np.array(x.scale, np.float32), f"{p}/x_scale"),
            numpy_helper.from_array(np.array(x.zero, np.uint8), f"{p}/x_zero"),
            numpy_helper.from_array(np.array(y.scale, np.float32), f"{p}/y_scale"),
            numpy_helper.from_array(np.array(y.zero, np.uint8), f"{p}/y_zero"),
            numpy_helper.from_array(bias, f"{p}/bias"),
        ]
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        replaced[name] = [
            helper.make_node(
                "QuantizeLinear",
                [conv.activation, f"{p}/x_scale", f"{p}/x_zero"],
                [f"{p}/x"],
                name=f"{p}/quantize",
            ),
            helper.make_node(
                "QLinearConv",
                [
                    *(f"{p}/x", f"{p}/x_scale", f"{p}/x_zero"),
                    *(f"{p}/weight", f"{p}/weight_scale", f"{p}/weight_zero"),
                    *(f"{p}/y_scale", f"{p}/y_zero", f"{p}/bias"),
                ],
                [f"{p}/y"],
                name=p,
                **attributes,
            ),
            helper.make_node(
                "DequantizeLinear",
                [f"{p}/y", f"{p}/y_scale", f"{p}/y_zero"],
                [conv.output],
                name=f"{p}/dequantize",
            ),
        ]
    graph.initializer.extend(new_inits)
    _splice(model, replaced, {by_name[n].output for n in chosen})
    _fixed_outputs(model, chosen, by_name)
    prune(model)
    return model


def _per_channel(
    weight: np.ndarray, zero: int, scale: float, bits: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """uint8 weights with one zero point and scale as int8 with a scale per output
    channel, within ±(2^(bits-1) - 1): exact where a channel's values fit, else rescaled."""
    import numpy as np

    top = (1 << (bits - 1)) - 1
    steps = weight.astype(np.int32) - zero
    most = np.abs(steps.reshape(len(steps), -1)).max(axis=1)
    per = np.where(most > top, most / top, 1.0)
    shape = (-1,) + (1,) * (steps.ndim - 1)
    quantized = np.clip(np.round(steps / per.reshape(shape)), -top, top).astype(np.int8)
    return quantized, (per * scale).astype(np.float32)


def _splice(
    model: onnx.ModelProto, replaced: dict[str, list[onnx.NodeProto]], outputs: set[str]
) -> None:
    """Each replaced ConvInteger's place taken by its new nodes; the nodes that made
    the old float output (bias, cast, scale) dropped."""
    kept = []
    for node in model.graph.node:
        if node.name in replaced:
            kept += replaced[node.name]
        elif not set(node.output) & outputs:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)


def _fixed_outputs(
    model: onnx.ModelProto, chosen: Mapping[str, Ranges], by_name: dict[str, Conv]
) -> None:
    """A quantizer none of whose convolutions is left on today's path becomes its
    fixed scale and zero point, under the same output names (the fed interface)."""
    from onnx import helper

    graph = model.graph
    still_read = {n.input[0] for n in graph.node if n.op_type == "ConvInteger"}
    fixed = {
        by_name[name].quantized: f"{name}/int8" for name in chosen
    }  # quantized tensor → one of its new convolutions
    nodes = []
    for node in graph.node:
        out = node.output[0] if node.output else ""
        if node.op_type in ("If", "DynamicQuantizeLinear") and out in fixed:
            if out in still_read:
                nodes.append(node)
                continue
            p = fixed[out]
            nodes += [
                helper.make_node("Identity", [f"{p}/x_scale"], [node.output[1]]),
                helper.make_node("Identity", [f"{p}/x_zero"], [node.output[2]]),
            ]
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
