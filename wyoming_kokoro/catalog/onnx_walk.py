"""Is a file a Kokoro ONNX model? A look at its protobuf structure, not a load.

A model that is not a published file has no size or hash to check it by. Before such
a file replaces a working model, its fields are walked (lengths skipped, never read):
the walk must end exactly at the end of the file (a copy under way, a cut-off
download fail it), and the graph must have Kokoro's shape: its inputs, a style 256
values wide, an `audio` output, thousands of nodes and tens of MB of weights. A
user's fine-tune of Kokoro, exported as Kokoro is, has all of these; a small graph
that merely names its inputs alike (it spoke noise in Kokoro's place) does not.
Loading is the worker's job; this costs a few thousand reads, no onnx, no numpy.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

# The graph's inputs a Kokoro model takes; older exports name the tokens "tokens".
KOKORO_INPUTS = (("tokens", "input_ids"), ("style",), ("speed",))
# Its output: the name kokoro-onnx's export gives it, and the one of the ONNX
# community's export (which names the tokens input_ids).
KOKORO_OUTPUTS = ("audio", "waveform")
STYLE_WIDTH = 256  # a voice's style vector
# Kokoro v1.0's graph has over 3,000 nodes, and 82 M weights: 90 MB at 8 bits, 40 MB
# even at 4. Bounds well below, so a fine-tune exported otherwise still passes.
MIN_NODES = 1_000
MIN_WEIGHT_BYTES = 30_000_000
# ModelProto.ir_version and .graph; GraphProto.node, .initializer, .input, .output;
# ValueInfoProto.name and .type; TypeProto.tensor_type; its .shape; TensorShapeProto.dim;
# Dimension.dim_value.
_IR_VERSION, _GRAPH = 1, 7
_NODE, _INITIALIZER, _INPUT, _OUTPUT = 1, 5, 11, 12
_NAME, _TYPE, _TENSOR, _SHAPE, _DIM, _DIM_VALUE = 1, 2, 1, 2, 1, 1
# Bounds a hostile file's cost: the published models have a few thousand fields.
_MAX_FIELDS = 200_000
_MAX_NAME = 256


class _NotAModel(ValueError):
    pass


def model_problem(path: Path, inputs: bool = True) -> str | None:
    """Why `path` is not a Kokoro ONNX model, or None when it looks like one.

    Without `inputs`, only the model's outer fields are walked (a published file,
    whose bytes the worker checks by sha256 anyway): a few reads whatever its size.
    """
    try:
        # Non-blocking: a FIFO put in its place since it was listed must not hang us.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        return f"cannot read it ({err.strerror or err})"
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return "not a regular file"
            return _kokoro_problem(handle, info.st_size, inputs)
        except _NotAModel as err:
            return f"not an ONNX model ({err})"
        except OSError as err:
            return f"cannot read it ({err.strerror or err})"


def _kokoro_problem(handle: BinaryIO, size: int, inputs: bool) -> str | None:
    budget = [_MAX_FIELDS]
    top = _fields(handle, 0, size, budget)
    if _IR_VERSION not in top or _GRAPH not in top:
        raise _NotAModel("no graph")
    if not inputs:
        return None
    graph_start, graph_length = top[_GRAPH][-1]
    graph = _fields(handle, graph_start, graph_start + graph_length, budget)
    inputs_by_name = _named(handle, graph.get(_INPUT, []), budget)
    missing = [alike[0] for alike in KOKORO_INPUTS if not inputs_by_name.keys() & set(alike)]
    if missing:
        return f"an ONNX model, but not Kokoro's: no input {', '.join(missing)}"
    outputs = _named(handle, graph.get(_OUTPUT, []), budget)
    if not outputs.keys() & set(KOKORO_OUTPUTS):
        return "an ONNX model, but not Kokoro's: no output audio"
    if _last_dim(handle, inputs_by_name["style"], budget) != STYLE_WIDTH:
        return f"an ONNX model, but not Kokoro's: its style is not {STYLE_WIDTH} values wide"
    nodes = len(graph.get(_NODE, []))
    if nodes < MIN_NODES:
        return f"an ONNX model, but not Kokoro's: {nodes} nodes, Kokoro's graph has thousands"
    weights = sum(length for _, length in graph.get(_INITIALIZER, []))
    if weights < MIN_WEIGHT_BYTES:
        return (
            f"an ONNX model, but not Kokoro's: {weights >> 20} MB of weights in the file, "
            f"Kokoro's take at least {MIN_WEIGHT_BYTES // 1_000_000} MB"
        )
    return None


def _named(
    handle: BinaryIO, values: list[tuple[int, int]], budget: list[int]
) -> dict[str, tuple[int, int]]:
    """ValueInfoProtos (at `values`) by name: where each one is."""
    found = {}
    for start, length in values:
        for name_start, name_length in _fields(handle, start, start + length, budget).get(
            _NAME, []
        ):
            if name_length <= _MAX_NAME:
                handle.seek(name_start)
                found[handle.read(name_length).decode("utf-8", "replace")] = (start, length)
    return found


def _last_dim(handle: BinaryIO, value: tuple[int, int], budget: list[int]) -> int | None:
    """The last dimension of a ValueInfoProto's tensor shape, if it is a number."""
    at = [value]
    for number in (_TYPE, _TENSOR, _SHAPE, _DIM):
        found = [] if not at else _fields(handle, at[-1][0], sum(at[-1]), budget).get(number, [])
        at = found
    if not at:
        return None
    dim = _fields(handle, at[-1][0], sum(at[-1]), budget).get(_DIM_VALUE, [])
    return dim[-1][0] if dim else None


def _fields(
    handle: BinaryIO, start: int, end: int, budget: list[int]
) -> dict[int, list[tuple[int, int]]]:
    """The length-delimited fields between `start` and `end` by number, as (start,
    length); a varint field as (value, 0). Raises _NotAModel unless the fields end
    exactly at `end`."""
    found: dict[int, list[tuple[int, int]]] = {}
    handle.seek(start)
    at = start
    while at < end:
        budget[0] -= 1
        if budget[0] < 0:
            raise _NotAModel("too many fields")
        tag = _varint(handle)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _NotAModel("field number 0")
        if wire == 0:
            found.setdefault(number, []).append((_varint(handle), 0))
        elif wire in (1, 5):
            handle.seek(8 if wire == 1 else 4, os.SEEK_CUR)
        elif wire == 2:
            length = _varint(handle)
            here = handle.tell()
            if here + length > end:
                raise _NotAModel("truncated")
            found.setdefault(number, []).append((here, length))
            handle.seek(length, os.SEEK_CUR)
        else:
            raise _NotAModel(f"wire type {wire}")
        at = handle.tell()
    if at != end:
        raise _NotAModel("truncated")
    return found


def _varint(handle: BinaryIO) -> int:
    value = 0
    for shift in range(0, 70, 7):
        byte = handle.read(1)
        if not byte:
            raise _NotAModel("truncated")
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value
    raise _NotAModel("varint too long")
