"""Which generator convolutions tolerate onnxruntime's fast int8 kernels (issue 57).

    .venv/bin/python bench/int8_layers.py calibrate [--sentences N]   # the ranges
    .venv/bin/python bench/int8_layers.py layers [--sentences N]      # one at a time
    .venv/bin/python bench/int8_layers.py sets [--sentences N]        # growing sets
    .venv/bin/python bench/int8_layers.py write --count N             # int8_ranges.py

`calibrate` decodes the teaching sentences (never a measured one) in every embedded
voice, whole, with today's generator, and keeps each convolution's input and output
range: the `--percentile` of the values seen (the rest is clipped), printed as
`wyoming_kokoro/synthesis/int8_ranges.py`. `layers` moves one convolution at a time
onto QLinearConv (`quantizing.rewrite`) and compares the generator's audio with
today's on held-out sentences (PESQ-WB, `bench/sound.py`): the sensitivity of each.
`sets` moves the least sensitive first, more and more, and prints the trade-off:
the generator's CPU time on one thread against today's, PESQ-WB mean and worst. One
thread, one process; the fidelity figures do not depend on the load, the times do.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sound import pesq_wb
from support.audio_distance import log_mel_distance
from texts import HELD_OUT

from wyoming_kokoro.audio import to_pcm16
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting, generator_choice, graph, quantizing, teaching
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.quantizing import Ranges, Span

VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
BLEND = "jf_gongitsune(1)+jm_kumo(1)"
SCRATCH = Path(os.environ.get("INT8_SCRATCH", "/tmp/int8-layers"))


def session(model: object, threads: int = 1) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def plans(engine: Engine, texts: list[tuple[str, str]]) -> list[dict[str, np.ndarray]]:
    cut = engine.cut
    assert cut is not None
    out = []
    for text, voice in texts:
        for call in engine.plan(text, engine.voice(voice)):
            out.append(cut.plan(engine.inputs(call)))
    return out


def feed(sess: object, plan: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    fed = {}
    for value in sess.get_inputs():
        if value.name.endswith("/fed"):
            fed[value.name] = np.zeros(
                [1, 1, 1] if len(value.shape) == 3 else [],
                np.uint8 if "uint8" in value.type else np.float32,
            )
    return {
        graph.FEATURES: plan[graph.FEATURES],
        graph.SOURCE: plan[graph.SOURCE],
        graph.STYLE_HALF: plan[graph.STYLE_HALF],
        graph.FED: np.array(False),
        **fed,
    }


def audio(gen: object, tail: object, plan: dict[str, np.ndarray]) -> np.ndarray:
    spectrum = gen.run([graph.SPECTRUM], feed(gen, plan))[0]
    return np.asarray(tail.run(None, {graph.SPECTRUM: spectrum})[0]).ravel()


def load() -> tuple[Engine, Path]:
    assets = resolve(None, None, [])
    directory = cutting.ready(assets.model) or cutting.build(assets, threads=1)
    return Engine(assets, EngineSettings(threads=1)), directory


def calibrate(args: argparse.Namespace) -> None:
    import onnx

    engine, directory = load()
    model = onnx.load(str(directory / graph.GENERATOR))
    found = quantizing.convs(model)
    gen = session(quantizing.probed(model, found))
    names = [o.name for o in gen.get_outputs()]
    texts = [(t, v) for v in VOICES for t in teaching.SENTENCES[: args.sentences]]
    texts += [(t, v) for v in VOICES for t in teaching.REPLIES[:3]]
    samples: dict[str, list[np.ndarray]] = {}
    extremes: dict[str, list[float]] = {}
    rng = np.random.default_rng(0)
    for i, plan in enumerate(plans(engine, texts)):
        outputs = dict(zip(names, gen.run(None, feed(gen, plan)), strict=True))
        for conv in found:
            for name in (conv.activation, conv.output):
                values = outputs[name].ravel()
                pick = rng.choice(len(values), min(len(values), 20_000), replace=False)
                samples.setdefault(name, []).append(values[pick])
                lo, hi = extremes.get(name, [np.inf, -np.inf])
                extremes[name] = [min(lo, float(values.min())), max(hi, float(values.max()))]
        print(f"calibrated on {i + 1} calls", file=sys.stderr)
    ranges = {}
    for conv in found:
        spans = []
        for name in (conv.activation, conv.output):
            values = np.concatenate(samples[name])
            q = args.percentile
            spans.append(
                [float(np.percentile(values, 100 - q)), float(np.percentile(values, q))]
                if q < 100
                else extremes[name]
            )
        ranges[conv.name] = spans
    SCRATCH.mkdir(parents=True, exist_ok=True)
    (SCRATCH / f"ranges-{args.percentile}.json").write_text(json.dumps(ranges, indent=1))
    print(f"wrote {SCRATCH / f'ranges-{args.percentile}.json'}")


def ranges_of(percentile: float) -> dict[str, Ranges]:
    raw = json.loads((SCRATCH / f"ranges-{percentile}.json").read_text())
    return {name: Ranges(Span(*x), Span(*y)) for name, (x, y) in raw.items()}


def evaluation(engine: Engine, count: int) -> list[dict[str, np.ndarray]]:
    """Held-out sentences, spread over the embedded voices and a blend."""
    voices = (*VOICES, BLEND)
    return plans(engine, [(t, voices[i % len(voices)]) for i, t in enumerate(HELD_OUT[:count])])


def cpu(gen: object, plans_: list[dict[str, np.ndarray]]) -> float:
    started = time.process_time()
    for plan in plans_:
        gen.run([graph.SPECTRUM], feed(gen, plan))
    return time.process_time() - started


def compare(model: object, today: list[np.ndarray], tail: object, ps: list) -> list[float]:
    """PESQ-WB of each plan's audio against today's; the log-mel distances (what the
    cut checks, `generator_choice.py`) go to `compare.distances`."""
    gen = session(model)
    scores, distances = [], []
    for ref, p in zip(today, ps, strict=True):
        got = audio(gen, tail, p)
        scores.append(pesq_wb(to_pcm16(ref), to_pcm16(got)))
        distances.append(log_mel_distance(ref, got))
    compare.distances = distances  # type: ignore[attr-defined]
    return scores


def groups(found: list, by_block: bool) -> dict[str, list[str]]:
    """Each convolution alone, or (`by_block`) the convolutions of each block together
    (a resblock, a noise_res block, the noise_convs): a fifth of the runs."""
    out: dict[str, list[str]] = {}
    for conv in found:
        block = conv.name.split("/")[4]
        key = (
            ("noise_convs" if block.startswith("noise_convs") else block) if by_block else conv.name
        )
        out.setdefault(key, []).append(conv.name)
    return out


def layers(args: argparse.Namespace) -> None:
    import onnx

    engine, directory = load()
    base = onnx.load(str(directory / graph.GENERATOR))
    tail = session(onnx.load(str(directory / graph.TAIL)))
    ranges = ranges_of(args.percentile)
    ps = evaluation(engine, args.sentences)
    today_gen = session(base)
    today = [audio(today_gen, tail, p) for p in ps]
    result = {}
    for name, members in groups(quantizing.convs(base), args.groups).items():
        model = onnx.ModelProto()
        model.CopyFrom(base)
        chosen = {m: ranges[m] for m in members}
        scores = compare(quantizing.rewrite(model, chosen, args.bits), today, tail, ps)
        result[name] = scores
        mel = compare.distances  # type: ignore[attr-defined]
        print(
            f"{name}: PESQ mean {np.mean(scores):.3f} worst {min(scores):.3f}"
            f" log-mel mean {np.mean(mel):.2f} worst {max(mel):.2f} dB",
            flush=True,
        )
    (SCRATCH / f"layers-{args.percentile}-{args.bits}.json").write_text(
        json.dumps(result, indent=1)
    )


def sets(args: argparse.Namespace) -> None:
    import onnx

    engine, directory = load()
    base = onnx.load(str(directory / graph.GENERATOR))
    tail = session(onnx.load(str(directory / graph.TAIL)))
    ranges = ranges_of(args.percentile)
    sensitivity = json.loads((SCRATCH / f"layers-{args.percentile}-{args.bits}.json").read_text())
    members = groups(quantizing.convs(base), args.groups)
    order = sorted(sensitivity, key=lambda n: -float(np.mean(sensitivity[n])))
    ps = evaluation(engine, args.sentences)
    today_gen = session(base)
    today = [audio(today_gen, tail, p) for p in ps]
    today_cpu = min(cpu(today_gen, ps) for _ in range(2))
    print(
        "| first N (blocks or convolutions) on QLinearConv | least PESQ of one alone "
        "| generator CPU / today's | PESQ-WB mean | worst | log-mel mean | worst |"
    )
    print("|---|---|---|---|---|---|---|")
    for count in args.counts:
        chosen = {m: ranges[m] for n in order[:count] for m in members[n]}
        model = onnx.ModelProto()
        model.CopyFrom(base)
        quantizing.rewrite(model, chosen, args.bits)
        scores = compare(model, today, tail, ps)
        gen = session(model)
        ratio = min(cpu(gen, ps) for _ in range(2)) / today_cpu
        least = min(float(np.mean(sensitivity[n])) for n in order[:count])
        mel = compare.distances  # type: ignore[attr-defined]
        print(
            f"| {count} | {least:.2f} | {ratio:.2f}× | {np.mean(scores):.2f} "
            f"| {min(scores):.2f} | {np.mean(mel):.2f} dB | {max(mel):.2f} dB |",
            flush=True,
        )
        (SCRATCH / f"set-{args.percentile}-{count}.json").write_text(json.dumps(sorted(chosen)))


def write(args: argparse.Namespace) -> None:
    """`int8_ranges.py` for the published int8 model: the ranges of the set of
    `--count` convolutions `sets` measured."""
    from wyoming_kokoro.catalog.files import MODEL_FILES

    raw = json.loads((SCRATCH / f"ranges-{args.percentile}.json").read_text())
    chosen = json.loads((SCRATCH / f"set-{args.percentile}-{args.count}.json").read_text())
    prefix, suffix = "/decoder/decoder/generator/", "/Conv_quant"
    lines = []
    for name in sorted(chosen):
        (xl, xh), (yl, yh) = raw[name]
        short = name.removeprefix(prefix).removesuffix(suffix)
        lines.append(f'        "{short}": (({xl:.6g}, {xh:.6g}), ({yl:.6g}, {yh:.6g})),')
    body = "\n".join(lines)
    key = MODEL_FILES["int8"].sha256[:16]
    text = TEMPLATE.format(percentile=args.percentile, count=len(chosen), key=key, body=body)
    path = Path(__file__).resolve().parent.parent / "wyoming_kokoro/synthesis/int8_ranges.py"
    path.write_text(text)
    print(f"wrote {path}")


TEMPLATE = '''"""The fixed ranges of the generator's convolutions that run on int8 kernels
(`quantizing.py`), per published model file; written by `bench/int8_layers.py write`.

Measured on speech: the teaching sentences and replies (never a test's or the
benchmark's) in every embedded voice, decoded whole by today's generator; each
range holds the {percentile}th percentile of the values seen on either side (the
rarer ones are clipped). Only the {count} convolutions whose sound survives fixed
ranges are listed (bench/RESULTS.md, Q); the others keep today's path.
"""

from __future__ import annotations

from wyoming_kokoro.catalog.files import BY_NAME
from wyoming_kokoro.synthesis.quantizing import Ranges, Span

_PREFIX, _SUFFIX = "/decoder/decoder/generator/", "/Conv_quant"

# Per model file (its sha256's head): convolution → (input range, output range).
_RANGES: dict[str, dict[str, tuple[tuple[float, float], tuple[float, float]]]] = {{
    "{key}": {{
{body}
    }},
}}


def chosen_ranges(model_name: str) -> dict[str, Ranges]:
    """The convolutions of `model_name`'s generator to move onto int8 kernels, with
    their ranges (empty for a model without measured ones)."""
    known = BY_NAME.get(model_name)
    table = _RANGES.get(known.sha256[:16], {{}}) if known is not None else {{}}
    return {{
        f"{{_PREFIX}}{{name}}{{_SUFFIX}}": Ranges(Span(*x), Span(*y))
        for name, (x, y) in table.items()
    }}
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("calibrate", "layers", "sets", "write"))
    parser.add_argument("--groups", action="store_true", help="whole blocks, not convolutions")
    parser.add_argument("--bits", type=int, default=generator_choice.weight_bits())
    parser.add_argument("--count", type=int, default=40, help="write: the set's size")
    parser.add_argument("--sentences", type=int, default=6)
    parser.add_argument("--percentile", type=float, default=99.999)
    parser.add_argument("--counts", type=int, nargs="*", default=[10, 20, 30, 40, 44, 48, 50])
    args = parser.parse_args()
    {"calibrate": calibrate, "layers": layers, "sets": sets, "write": write}[args.step](args)


if __name__ == "__main__":
    main()
