"""Which generator this machine runs: today's, or the one on int8 kernels
(`quantizing.py`), timed and heard here when the model is cut.

The int8 kernels' speed is the CPU's: onnxruntime's `QLinearConv` is fast where the
CPU multiplies bytes in one instruction, and may be no faster, or round differently,
elsewhere (an ARM board, an older x86). So the cut makes the int8 generator, decodes
the same samples with both, and keeps it only if it sounds like today's (log-mel
distance, the measure of bench/RESULTS.md's W3) and costs clearly less CPU here. The
entry then holds it beside today's, both in the `verified` mark with their sha256,
and the mark names the CPU it was chosen on: a cache moved to another CPU (an image
built elsewhere) decodes with today's generator until it is cut again there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyoming_kokoro.synthesis.graph import GENERATOR, PLAN, TAIL

if TYPE_CHECKING:
    import numpy as np

_LOGGER = logging.getLogger(__name__)

INT8 = "generator-int8.onnx"
CHOSEN = "int8 generator chosen on CPU"  # the mark's line, then the CPU's key
# The int8 generator must cost at most this share of today's CPU here: a smaller
# gain is within what timing a busy machine can tell apart.
FASTER = 0.85
# The worst sample's log-mel distance to today's audio it may have (dB): where PESQ-WB
# against today's stays at or above 3.9 (bench/RESULTS.md, section Q).
FARTHEST_DB = 1.5
_SAMPLES = 3
_ROUNDS = 2


@dataclass(frozen=True)
class Trial:
    """Both generators on the same samples, here."""

    today: float  # CPU seconds of today's generator
    int8: float  # ... of the int8 one
    distance: float  # the farthest sample's log-mel distance to today's audio, dB

    @property
    def ratio(self) -> float:
        return self.int8 / self.today if self.today > 0 else float("inf")


def weight_bits() -> int:
    """8 where the CPU multiplies bytes into 32-bit sums in one instruction (VNNI), else
    7: x86 without it sums two byte products in 16 bits, which saturate on full-range
    weights (onnxruntime's own advice: "reduce range")."""
    import platform
    from pathlib import Path

    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
        return 8
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return 7
    return 8 if "avx512_vnni" in flags or "avx_vnni" in flags else 7


def worth_trying() -> bool:
    """Whether the int8 generator may be faster here. An x86 CPU without VNNI sums byte
    products no faster than today's kernels (bench/RESULTS.md, section Q): a trial
    there would only spend the user's CPU. Elsewhere only a trial can tell."""
    return weight_bits() == 8


def prefer_int8(trial: Trial) -> bool:
    """Whether the int8 generator is kept: it sounds like today's and is faster here."""
    return trial.distance <= FARTHEST_DB and trial.int8 <= FASTER * trial.today


def describe(trial: Trial) -> str:
    verdict = "runs on int8 kernels" if prefer_int8(trial) else "stays on today's kernels"
    return (
        f"The generator {verdict} on this CPU: the int8 one took {trial.ratio:.2f}× "
        f"today's CPU time, {trial.distance:.2f} dB from its sound at most"
    )


def log_mel_distance(reference: np.ndarray, candidate: np.ndarray, rate: int = 24_000) -> float:
    """Mean |Δ| in dB of two clips' log-mel spectrograms (80 bands, 1024-point frames
    every 256 samples) on their common length, near-silence (80 dB below the loudest)
    not counted."""
    import numpy as np

    length = min(len(reference), len(candidate))
    bins = np.fft.rfftfreq(1024, 1 / rate)

    def mel(hz: Any) -> Any:
        return 2595 * np.log10(1 + np.asarray(hz) / 700)

    edges = 700 * (10 ** (np.linspace(mel(60.0), mel(rate / 2 * 0.95), 82) / 2595) - 1)
    filters = np.stack(
        [
            np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0, None)
            for lo, mid, hi in zip(edges, edges[1:], edges[2:], strict=False)
        ]
    )

    def spectrum(audio: np.ndarray) -> np.ndarray:
        padded = np.pad(audio[:length].astype(np.float64), 512)
        count = 1 + (len(padded) - 1024) // 256
        frames = np.stack([padded[i * 256 : i * 256 + 1024] for i in range(count)])
        power = np.abs(np.fft.rfft(frames * np.hanning(1024), axis=1)) ** 2
        return np.asarray(10 * np.log10(power @ filters.T + 1e-10))

    a, b = spectrum(reference), spectrum(candidate)
    floor = max(a.max(), b.max()) - 80
    return float(np.mean(np.abs(np.maximum(a, floor) - np.maximum(b, floor))))


def trial(
    today: Callable[[Any], np.ndarray],
    int8: Callable[[Any], np.ndarray],
    plans: list[Any],
    clock: Callable[[], float] = time.process_time,
) -> Trial:
    """Both generators decode `plans` in turn, `_ROUNDS` times; each one's best round's
    CPU time, and the farthest plan's distance between their audio."""
    best = {today: float("inf"), int8: float("inf")}
    heard: dict[Any, list[np.ndarray]] = {}
    for _ in range(_ROUNDS):
        for decode in (today, int8):
            began = clock()
            heard[decode] = [decode(plan) for plan in plans]
            best[decode] = min(best[decode], clock() - began)
    distance = max(log_mel_distance(a, b) for a, b in zip(heard[today], heard[int8], strict=True))
    return Trial(best[today], best[int8], distance)


def samples(styles: np.ndarray, vocabulary: range) -> list[dict[str, np.ndarray]]:
    """Model inputs a second or two long each, in several voices, reproducible."""
    import numpy as np

    rng = np.random.default_rng(57)
    tokens = np.array([t for t in vocabulary if t])
    out = []
    for i in range(_SAMPLES):
        ids = rng.choice(tokens, size=int(rng.integers(25, 40)))
        style = styles[i % len(styles)][len(ids) - 1].reshape(1, -1)
        out.append(
            {
                "tokens": np.array([[0, *ids, 0]], np.int64),
                "style": style.astype(np.float32),
                "speed": np.array([1.0], np.float32),
            }
        )
    return out


def make_and_choose(
    model_name: str, partial: Path, threads: int, inputs: list[dict[str, np.ndarray]]
) -> str | None:
    """Make the int8 generator in `partial` (a cut being built), try it against today's
    here, and keep it if it is preferred: the mark's line saying so, else None (the
    file removed). Models without measured ranges keep today's generator."""
    import onnx

    from wyoming_kokoro.synthesis import quantizing
    from wyoming_kokoro.synthesis.decoder import CutModel
    from wyoming_kokoro.synthesis.int8_ranges import chosen_ranges
    from wyoming_kokoro.synthesis.runtime import cpu_key, create_session

    ranges = chosen_ranges(model_name)
    if not ranges:
        _LOGGER.info("No int8 ranges are known for %s: the generator stays as it is", model_name)
        return None
    if not worth_trying():
        _LOGGER.info(
            "The generator stays on today's kernels: this CPU has no VNNI, "
            "where the int8 ones are no faster"
        )
        return None
    _LOGGER.info("Trying the generator on int8 kernels against today's on this CPU")
    target = partial / INT8
    try:
        model = quantizing.rewrite(onnx.load(str(partial / GENERATOR)), ranges, weight_bits())
        onnx.save(model, str(target))
        sessions = {
            name: create_session(str(partial / name), threads, None)
            for name in (PLAN, GENERATOR, TAIL)
        }
        today = CutModel(sessions)
        int8 = CutModel({**sessions, GENERATOR: create_session(str(target), threads, None)})
        plans = [today.plan(sample) for sample in inputs]
        result = trial(today.whole, int8.whole, plans)
    except Exception as err:  # onnx and onnxruntime raise their own types
        _LOGGER.warning("The int8 generator could not be tried here (%s): keeping today's", err)
        target.unlink(missing_ok=True)
        return None
    _LOGGER.info(describe(result))
    if not prefer_int8(result):
        target.unlink(missing_ok=True)
        return None
    return f"{CHOSEN} {cpu_key()}"


def generator_file(note: str, recorded: Mapping[str, object] | None, cpu: str) -> str:
    """The generator part a worker loads from an entry whose mark reads `note` and
    lists `recorded`: the int8 one if it was chosen on this CPU, else today's."""
    if recorded is None or INT8 not in recorded:
        return GENERATOR
    for line in note.splitlines():
        if line.startswith(CHOSEN):
            if line[len(CHOSEN) :].strip() == cpu:
                _LOGGER.info("The generator runs on int8 kernels (chosen for this CPU)")
                return INT8
            _LOGGER.info("The int8 generator was chosen on another CPU: using today's")
    _LOGGER.debug("The generator runs on today's kernels")
    return GENERATOR
