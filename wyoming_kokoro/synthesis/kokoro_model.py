"""kokoro-onnx's loaded model as the engine uses it: voices, inputs, whole calls.

A voice's or a blend's style vectors are checked for their shape once and kept; a
call's inputs are built as kokoro-onnx's create() builds them; without the cut model,
calls are decoded at once by create() on the whole graph, stoppable from another
thread. With the cut model, kokoro-onnx holds the plan part only (for its tokenizer
and voices), and its create() fails loudly rather than return the plan's features.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wyoming_kokoro.audio import silence, to_pcm16
from wyoming_kokoro.catalog.voices import VoiceError, VoiceSpec
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.stopping import Interruptible


class _PlanOnly:
    """Stands in for the whole graph in kokoro-onnx when only the cut model is loaded."""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the whole graph is not loaded: decode through the cut model")


class KokoroModel:
    """One loaded kokoro-onnx model (`cut_loaded`: its whole graph is not to be run)."""

    def __init__(self, kokoro: Any, cut_loaded: bool) -> None:
        self._kokoro = kokoro
        self._styles: dict[VoiceSpec, np.ndarray] = {}
        session = Interruptible(kokoro.sess)
        kokoro.sess = _PlanOnly() if cut_loaded else session
        # What stops a call running on the whole graph from another thread.
        self.switch = session.switch
        self.voice_names: tuple[str, ...] = tuple(kokoro.get_voices())

    def style(self, spec: VoiceSpec) -> np.ndarray:
        """The voice's (or blend's) style vectors, one row per token count."""
        style = self._styles.get(spec)
        if style is None:
            for name, _ in spec.parts:
                shape = np.shape(self._kokoro.get_voice_style(name))
                if len(shape) != 3 or shape[0] < 1 or shape[1:] != (1, 256):
                    raise VoiceError(f"voice {name} has the shape {shape}, not (N, 1, 256)")
            style = sum(
                self._kokoro.get_voice_style(name).astype(np.float32) * weight
                for name, weight in spec.parts
            )
            self._styles[spec] = style
        return style

    def inputs(self, call: Call) -> dict[str, np.ndarray]:
        """The model's inputs for `call`."""
        tokens = self._kokoro.tokenizer.tokenize(" ".join(call.phonemes.split()))
        style = self.style(call.voice)
        return {
            "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
            "style": style[min(len(tokens), len(style)) - 1].reshape(1, -1).astype(np.float32),
            "speed": np.array([call.speed], dtype=np.float32),
        }

    def run(self, call: Call, tag: object = None) -> np.ndarray:
        """`call` decoded at once on the whole graph, with its pause (see `Engine.run`)."""
        with self.switch.running(tag):
            audio, _ = self._kokoro.create(
                call.phonemes,
                voice=self.style(call.voice),
                speed=call.speed,
                is_phonemes=True,
                trim=True,
                sentence_pause=0.0,
                clause_pause=0.0,
            )
        pause = silence(call.pause)
        return np.concatenate([to_pcm16(audio), pause])
