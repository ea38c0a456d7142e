"""Q: the generator on int8 kernels (issue 57): CPU per audio second and fidelity.

    .venv/bin/python bench/int8.py [--rounds N] [--sentences N] [--cpu-only | --sound-only]
        [--exact-8bit]

CPU: whole processes in turn, each on one onnxruntime thread, each speaking the same
596-character paragraph (`texts.ENGLISH_600`) after a warm-up: kokoro-onnx `create()`
on the whole model file, ours with today's generator, ours with the int8 one; the
CPU seconds (user + system) of the speaking only, per second of audio, and each of
ours against kokoro-onnx's in the same run. The int8 generator is the one the cut
makes (`generator_choice.py`, ranges from `int8_ranges.py`), used here whether or not
this CPU would choose it.

Fidelity: held-out sentences (`texts.HELD_OUT`, never the calibration's) in every
embedded voice and a blend, decoded whole by both generators: PESQ-WB of the int8
one's audio against today's (`bench/sound.py`), the log-mel distance the cut checks,
and what the Whisper judge hears of each (WER against the text). Fidelity does not
depend on the load; the CPU ratios do: say the load. Without VNNI the weights have 7
bits (`generator_choice.weight_bits`); `--exact-8bit` measures what a CPU with VNNI
would hear (8-bit weights, summed exactly by the u8×u8 kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import texts  # noqa: E402

from wyoming_kokoro.catalog.assets import resolve  # noqa: E402
from wyoming_kokoro.catalog.cut import mark_verified, ready  # noqa: E402
from wyoming_kokoro.synthesis import generator_choice, graph  # noqa: E402

VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
BLEND = "jf_gongitsune(1)+jm_kumo(1)"
VOICE, LANG = "jm_kumo", "en-us"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def with_int8(entry: Path, scratch: Path) -> Path:
    """A cache entry like `entry` (its parts linked) whose mark chooses the int8
    generator on this CPU, made from `int8_ranges.py` if `entry` holds none."""
    import onnx

    from wyoming_kokoro.synthesis import quantizing
    from wyoming_kokoro.synthesis.int8_ranges import chosen_ranges
    from wyoming_kokoro.synthesis.runtime import cpu_key

    target = scratch / entry.name
    target.mkdir(parents=True, exist_ok=True)
    for name in graph.PARTS:
        (target / name).symlink_to((entry / name).resolve())
    if (entry / generator_choice.INT8).is_file():
        (target / generator_choice.INT8).symlink_to((entry / generator_choice.INT8).resolve())
    else:
        ranges = chosen_ranges(resolve(None, None, []).model.name)
        model = quantizing.rewrite(
            onnx.load(str(entry / graph.GENERATOR)), ranges, generator_choice.weight_bits()
        )
        onnx.save(model, str(target / generator_choice.INT8))
    note = f"bench\n{generator_choice.CHOSEN} {cpu_key()}"
    mark_verified(target, (*graph.PARTS, generator_choice.INT8), note)
    return target


def child(kind: str, text: str, entry: str | None) -> None:
    """One process: load, warm up, then speak `text` once; print CPU and audio seconds."""
    assets = resolve(None, None, [])
    if kind == "kokoro":
        import onnxruntime as ort
        from kokoro_onnx import Kokoro

        from wyoming_kokoro.catalog.assets import prepare_model

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            str(prepare_model(assets)), options, providers=["CPUExecutionProvider"]
        )
        kokoro = Kokoro.from_session(session, str(assets.voices))
        kokoro.create("Ready.", voice=VOICE, lang=LANG)

        def speak() -> int:
            audio, _ = kokoro.create(text, voice=VOICE, lang=LANG)
            return len(audio)
    else:
        from wyoming_kokoro.settings import EngineSettings
        from wyoming_kokoro.synthesis.engine import Engine
        from wyoming_kokoro.synthesis.loading import ModelLoading
        from wyoming_kokoro.text.pieces import split_text

        assert entry is not None
        loading = ModelLoading(assets, 1, cut=Path(entry))
        engine = Engine(assets, EngineSettings(threads=1), loading=loading)
        engine.warm_up()
        spec = engine.voice(VOICE)

        def speak() -> int:
            return sum(
                len(pcm)
                for piece in split_text(text)
                for pcm in engine.speak(piece, spec, 1.0, LANG)
            )

    began = cpu_seconds()
    samples = speak()
    print(json.dumps({"cpu": cpu_seconds() - began, "audio": samples / 24_000}))


def cpu_table(rounds: int) -> None:
    entry = ready(resolve(None, None, []).model)
    assert entry is not None, "cut the model first: python -m wyoming_kokoro.synthesis.cutting"
    scratch = Path(tempfile.mkdtemp(prefix="int8-bench-"))
    today = scratch / "today" / entry.name
    today.mkdir(parents=True)
    for name in graph.PARTS:
        (today / name).symlink_to((entry / name).resolve())
    mark_verified(today, graph.PARTS, "bench")
    int8 = with_int8(entry, scratch / "int8")
    kinds = {"kokoro-onnx create()": None, "ours, today's generator": today, "ours, int8": int8}
    spent: dict[str, list[float]] = {k: [] for k in kinds}
    load_before = os.getloadavg()[0]
    for rnd in range(rounds):
        order = list(kinds.items())
        for name, where in order if rnd % 2 == 0 else order[::-1]:
            command = [sys.executable, __file__, "--child", "kokoro" if where is None else "ours"]
            if where is not None:
                command += ["--entry", str(where)]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            spent[name].append(result["cpu"] / result["audio"])
    base = statistics.median(spent["kokoro-onnx create()"])
    print(f"\nCPU per audio second, one thread, {rounds} rounds, load before {load_before:.1f}\n")
    print("| process | CPU s per audio s (median) | against kokoro-onnx |")
    print("|---|---|---|")
    for name, values in spent.items():
        value = statistics.median(values)
        print(f"| {name} | {value:.3f} | {value / base:.2f}× |")
    print(f"\nload after {os.getloadavg()[0]:.1f}")


def as_unsigned(model: Any) -> None:
    """8-bit int8 weights stored as uint8 with a zero point of 128: QLinearConv's u8×u8
    kernels sum them exactly on any CPU, as VNNI's u8×s8 ones do (what a CPU with VNNI
    would hear, measured on one without)."""
    from onnx import numpy_helper

    graph_ = model.graph
    for i, init in enumerate(graph_.initializer):
        if init.name.endswith("/int8/weight") or init.name.endswith("/int8/weight_zero"):
            values = numpy_helper.to_array(init).astype(np.int16) + 128
            graph_.initializer[i].CopyFrom(
                numpy_helper.from_array(values.astype(np.uint8), init.name)
            )


def sound_table(sentences: int, exact_8bit: bool = False) -> None:
    import onnx
    from sound import pesq_wb
    from support.judge import heard, wer

    from wyoming_kokoro.audio import to_pcm16
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis import quantizing
    from wyoming_kokoro.synthesis.decoder import CutModel
    from wyoming_kokoro.synthesis.engine import Engine
    from wyoming_kokoro.synthesis.int8_ranges import chosen_ranges
    from wyoming_kokoro.synthesis.runtime import create_session

    assets = resolve(None, None, [])
    entry = ready(assets.model)
    assert entry is not None
    engine = Engine(assets, EngineSettings(threads=1))
    sessions = {n: create_session(str(entry / n), 1, None) for n in graph.PARTS}
    ranges = chosen_ranges(assets.model.name)
    bits = 8 if exact_8bit else generator_choice.weight_bits()
    model = quantizing.rewrite(onnx.load(str(entry / graph.GENERATOR)), ranges, bits)
    if exact_8bit:
        as_unsigned(model)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / generator_choice.INT8
        onnx.save(model, str(path))
        int8_session = create_session(str(path), 1, None)
    today, int8 = CutModel(sessions), CutModel({**sessions, graph.GENERATOR: int8_session})
    rows, errors = [], {"today": [], "int8": []}
    for voice in (*VOICES, BLEND):
        scores, distances = [], []
        for text in texts.HELD_OUT[:sentences]:
            spec = engine.voice(voice)
            for call in engine.plan(text, spec):
                plan = today.plan(engine.inputs(call))
                a, b = today.whole(plan), int8.whole(plan)
                scores.append(pesq_wb(to_pcm16(a), to_pcm16(b)))
                distances.append(generator_choice.log_mel_distance(a, b))
                if voice == VOICE:
                    errors["today"].append(wer(text, heard(a)))
                    errors["int8"].append(wer(text, heard(b)))
        rows.append(
            f"| {voice} | {np.mean(scores):.2f} / {min(scores):.2f} "
            f"| {np.mean(distances):.2f} / {max(distances):.2f} dB |"
        )
    print(
        f"\n{len(ranges)} convolutions on int8 kernels, {bits}-bit weights"
        f"{' (summed exactly)' if exact_8bit else ''}; {sentences} held-out sentences\n"
    )
    print("| voice | PESQ-WB vs today's, mean / worst | log-mel, mean / worst |")
    print("|---|---|---|")
    print("\n".join(rows))
    print(
        f"\nWER ({VOICE}, English): today's {np.mean(errors['today']):.3f}, "
        f"int8 {np.mean(errors['int8']):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--cpu-only", action="store_true")
    parser.add_argument("--sound-only", action="store_true")
    parser.add_argument(
        "--exact-8bit", action="store_true", help="fidelity with 8-bit weights summed exactly"
    )
    parser.add_argument("--child", choices=("kokoro", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--entry", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, texts.ENGLISH_600, args.entry)
        return
    if not args.sound_only:
        cpu_table(args.rounds)
    if not args.cpu_only:
        sound_table(args.sentences, args.exact_8bit)


if __name__ == "__main__":
    main()
