"""A call stopped by us prints nothing of onnxruntime's on stderr: the coloured
"[E:onnxruntime …] Exiting due to terminate flag being set to true" line is our own
stop, not a failure. A real onnxruntime session in a subprocess (its native log goes
to the process's stderr), on a model that loops long enough to be stopped midway."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import threading
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from wyoming_kokoro.synthesis.stopping import Interrupted, Interruptible

    def value(name, kind, shape):
        return helper.make_tensor_value_info(name, kind, shape)

    square = [64, 64]
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("MatMul", ["v_in", "w"], ["v_out"]),
        ],
        "body",
        [
            value("i", TensorProto.INT64, []),
            value("cond_in", TensorProto.BOOL, []),
            value("v_in", TensorProto.FLOAT, square),
        ],
        [value("cond_out", TensorProto.BOOL, []), value("v_out", TensorProto.FLOAT, square)],
    )
    constants = [
        helper.make_tensor("w", TensorProto.FLOAT, square, np.eye(64, dtype=np.float32).ravel()),
        helper.make_tensor("n", TensorProto.INT64, [], [10**9]),  # stopped long before
        helper.make_tensor("c", TensorProto.BOOL, [], [True]),
    ]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "x"], ["y"], body=body)],
        "g",
        [value("x", TensorProto.FLOAT, square)],
        [value("y", TensorProto.FLOAT, square)],
        constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = Interruptible(
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    )
    try:
        with session.switch.running("call"):
            threading.Timer(0.05, session.switch.interrupt, ("call",)).start()
            session.run(None, {"x": np.ones(square, np.float32)})
    except Interrupted:
        print("stopped")
    """
)


def test_a_stopped_call_prints_nothing_on_stderr() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "stopped", done.stderr
    assert done.stderr == "", done.stderr
