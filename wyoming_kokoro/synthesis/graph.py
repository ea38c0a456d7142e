"""The Kokoro graph cut in three, so the generator can decode a call window by window.

Kokoro is one ONNX graph: text → durations, pitch and features (the "plan": the
encoder, predictor and the decoder's body with its harmonic source, about 9 % of a
call) → the generator (the source's STFT and the upsampling network, about 90 %,
linear in frames) → an inverse STFT. Cut at the
tensors named below, the parts chained give audio bit-identical to the whole graph.

The generator's instance norms take their statistics over the time axis of what
they are given, and its int8 activations are quantized with a scale taken from the
min and max of the whole tensor. A window decoded alone therefore sounds unlike the
same frames decoded whole. So the generator part is rewritten: every statistic
(`ReduceMean`) reduces over batch and time, and with `fed` set, each statistic and
each quantization scale is taken from an input instead. A batch of windows spread
over a call then yields statistics close to the whole call's, and the later windows
are decoded with exactly those: with the whole call's own statistics fed, windows
with 6 frames of context on each side reproduce the whole decode.

Built once per model file and onnxruntime release, saved in the cache, and trusted
only after the chain matched the single graph on sample inputs (see `verify`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import onnx

_LOGGER = logging.getLogger(__name__)

# Where the published Kokoro v1.0 exports (fp32, fp16, int8) are cut.
ASR = "/encoder/MatMul_1_output_0"
F0 = "/encoder/Reshape_output_0"
NOISE = "/encoder/Reshape_1_output_0"
DURATIONS = "/encoder/Cast_output_0"
STYLE_HALF = "/decoder/Slice_output_0"
FEATURES = "/decoder/decoder/decode.3/Div_4_output_0"  # [1, 512, 2F]
# The harmonic source as a signal, before its STFT (n_fft 20, hop 5): the STFT runs
# in the generator, on each window's samples only, not in the plan for the whole call.
SOURCE = "/decoder/decoder/generator/Reshape_3_output_0"  # [1, 600F + 20]
SOURCE_TAIL = 20  # samples past a window's last frame its source needs (the STFT's n_fft)
SPECTRUM = "/decoder/decoder/generator/conv_post/Conv_output_0"  # [B, 22, 120F + 1]
AUDIO = "audio"
FED = "fed"
SAMPLES_PER_FRAME = 600  # 25 ms at 24 kHz

PLAN = "plan.onnx"
GENERATOR = "generator.onnx"
TAIL = "tail.onnx"
PARTS = (PLAN, GENERATOR, TAIL)


class GraphError(ValueError):
    """The model's graph cannot be cut where Kokoro v1.0's can."""


@dataclass(frozen=True)
class Statistics:
    """The names of the generator's fed values, in the order of its extra outputs."""

    means: tuple[str, ...]  # every ReduceMean output
    scales: tuple[str, ...]  # every DynamicQuantizeLinear scale
    zero_points: tuple[str, ...]  # ... and its zero point

    @staticmethod
    def of(model: onnx.ModelProto) -> Statistics:
        nodes = model.graph.node
        quantized = [n for n in nodes if n.op_type == "DynamicQuantizeLinear"]
        return Statistics(
            tuple(n.output[0] for n in nodes if n.op_type == "ReduceMean"),
            tuple(n.output[1] for n in quantized),
            tuple(n.output[2] for n in quantized),
        )

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.means + self.scales + self.zero_points


def fed_input(name: str) -> str:
    return f"{name}/fed"


def _tensor_names(model: onnx.ModelProto) -> set[str]:
    names = {i.name for i in model.graph.input}
    for node in model.graph.node:
        names.update(node.output)
    return names


def _batched(model: onnx.ModelProto, keep: Iterable[str]) -> None:
    """Let the batch axis of inputs and outputs vary (windows go in as a batch)."""
    fixed = set(keep)
    del model.graph.value_info[:]  # shapes inferred for batch 1 would contradict
    for value in (*model.graph.input, *model.graph.output):
        shape = value.type.tensor_type.shape
        if value.name not in fixed and value.type.tensor_type.HasField("shape") and shape.dim:
            shape.dim[0].dim_param = "batch"


def _generator(core: onnx.ModelProto) -> onnx.ModelProto:
    """Pool statistics over the batch; take them, and the quantization scales, from
    inputs when `fed` is true; output the values used."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    stats = Statistics.of(core)
    graph = core.graph
    graph.initializer.append(numpy_helper.from_array(np.array([0, 2], np.int64), "pool/axes"))
    graph.input.append(helper.make_tensor_value_info(FED, TensorProto.BOOL, []))
    nodes = []
    for node in graph.node:
        if node.op_type == "ReduceMean":
            used = node.output[0]
            node.input[1] = "pool/axes"
            node.output[0] = f"{used}/own"
            graph.input.append(
                helper.make_tensor_value_info(fed_input(used), TensorProto.FLOAT, [1, None, 1])
            )
            nodes += [
                node,
                helper.make_node("Where", [FED, fed_input(used), f"{used}/own"], [used]),
            ]
        elif node.op_type == "DynamicQuantizeLinear":
            _, scale, zero = node.output
            graph.input.append(
                helper.make_tensor_value_info(fed_input(scale), TensorProto.FLOAT, [])
            )
            graph.input.append(
                helper.make_tensor_value_info(fed_input(zero), TensorProto.UINT8, [])
            )
            nodes.append(_fed_or_own(node))
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    for name in stats.means:
        graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    for name in stats.scales:
        graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    for name in stats.zero_points:
        graph.output.append(helper.make_tensor_value_info(name, TensorProto.UINT8, None))
    _batched(core, keep=[STYLE_HALF, FED])
    return core


def _fed_or_own(quantize: onnx.NodeProto) -> onnx.NodeProto:
    """`quantize` (a DynamicQuantizeLinear) as an If: the fed scale and zero point
    when `fed`, else its own. An If, not both computed and one picked by Where: the
    activation then has one reader, as in the single graph. (With two, onnxruntime
    kept more of them alive at once: bench/RESULTS.md, M.)"""
    from onnx import TensorProto, helper

    activation, outputs = quantize.input[0], list(quantize.output)
    kinds = (TensorProto.UINT8, TensorProto.FLOAT, TensorProto.UINT8)

    def branch(name: str, nodes: list[onnx.NodeProto], results: list[str]) -> onnx.GraphProto:
        values = [
            helper.make_tensor_value_info(r, k, None) for r, k in zip(results, kinds, strict=True)
        ]
        return helper.make_graph(nodes, name, [], values)

    fed = [f"{name}/fed_branch" for name in outputs]
    own = [f"{name}/own" for name in outputs]
    scale, zero = (fed_input(name) for name in outputs[1:])
    then = branch(
        f"{outputs[0]}/fed_branch",
        [
            helper.make_node("QuantizeLinear", [activation, scale, zero], fed[:1]),
            helper.make_node("Identity", [scale], fed[1:2]),
            helper.make_node("Identity", [zero], fed[2:]),
        ],
        fed,
    )
    otherwise = branch(
        f"{outputs[0]}/own_branch",
        [helper.make_node("DynamicQuantizeLinear", [activation], own)],
        own,
    )
    return helper.make_node(
        "If", [FED], outputs, name=quantize.name, then_branch=then, else_branch=otherwise
    )


def cut(model_path: Path) -> dict[str, onnx.ModelProto]:
    """The three parts of a Kokoro graph (GraphError if it is not cut like v1.0's)."""
    import onnx
    import onnx.utils

    model = onnx.load(str(model_path))
    names = _tensor_names(model)
    wanted = (ASR, F0, NOISE, DURATIONS, STYLE_HALF, FEATURES, SOURCE, SPECTRUM, AUDIO)
    missing = [name for name in wanted if name not in names]
    if missing or {i.name for i in model.graph.input} != {"tokens", "style", "speed"}:
        raise GraphError(f"no tensor named {missing[0] if missing else 'tokens'}")
    extractor = onnx.utils.Extractor(model)
    try:
        plan = extractor.extract_model(
            ["tokens", "style", "speed"], [FEATURES, SOURCE, DURATIONS, STYLE_HALF]
        )
        core = extractor.extract_model([FEATURES, SOURCE, STYLE_HALF], [SPECTRUM])
        tail = extractor.extract_model([SPECTRUM], [AUDIO])
    except Exception as err:  # onnx raises several types for a graph it cannot cut
        raise GraphError(f"the graph does not split: {err}") from err
    # kokoro-onnx reads the vocabulary from the model's metadata.
    for part in (plan, core, tail):
        part.metadata_props.extend(model.metadata_props)
    return {PLAN: plan, GENERATOR: _generator(core), TAIL: tail}


def save(parts: dict[str, onnx.ModelProto], directory: Path) -> None:
    import onnx

    directory.mkdir(parents=True, exist_ok=True)
    for name, part in parts.items():
        onnx.save(part, str(directory / name))


def sample_inputs(
    count: int, vocabulary: Iterable[int], styles: np.ndarray
) -> list[dict[str, Any]]:
    """Short, varied, reproducible model inputs to check a cut against the whole graph."""
    import numpy as np

    rng = np.random.default_rng(0)
    tokens = np.array(sorted(set(vocabulary) - {0}))
    samples = []
    for i in range(count):
        length = int(rng.integers(3, 24))
        ids = rng.choice(tokens, size=length)
        style = styles[rng.integers(len(styles))][length - 1].reshape(1, -1)
        samples.append(
            {
                "tokens": np.array([[0, *ids, 0]], np.int64),
                "style": style.astype(np.float32),
                "speed": np.array([0.8 + 0.05 * (i % 9)], np.float32),
            }
        )
    return samples


def verify(
    whole: Callable[[dict[str, Any]], np.ndarray],
    chained: Callable[[dict[str, Any]], np.ndarray],
    samples: list[dict[str, Any]],
) -> None:
    """GraphError unless the chained parts give the whole graph's audio on every sample."""
    import numpy as np

    for sample in samples:
        expected, got = whole(sample).ravel(), chained(sample).ravel()
        if expected.shape != got.shape or not np.array_equal(expected, got):
            diff = np.abs(expected - got).max() if expected.shape == got.shape else "a length"
            raise GraphError(f"the parts differ from the whole graph by {diff}")


def _subgraph_inputs(node: onnx.NodeProto) -> set[str]:
    names: set[str] = set()
    for attribute in node.attribute:
        if attribute.g.node:
            for inner in attribute.g.node:
                names.update(inner.input)
                names.update(_subgraph_inputs(inner))
    return names


def prune(model: onnx.ModelProto) -> None:
    """Nodes whose outputs nothing reads, and initializers nothing reads, removed."""
    graph = model.graph
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        if set(node.output) & needed:
            kept.append(node)
            needed.update(node.input)
            needed.update(_subgraph_inputs(node))
    del graph.node[:]
    graph.node.extend(reversed(kept))
    initializers = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
