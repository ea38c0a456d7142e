"""kokoro-say's long form against today's one-process kokoro-say, on the same book.

    .venv/bin/python bench/long_form.py [--minutes 30] [--keep DIR]

A book of about `--minutes` of speech is built here (chapters of prose from
bench/texts.py, Markdown headings between them). It is spoken twice, each run a
fresh `kokoro-say` process:

- one process: the whole text as one `.txt` into one WAV, as kokoro-say always did
  (its automatic threads);
- long form: the Markdown into an M4B with chapter marks, parts spoken by one process
  per usable CPU (one onnxruntime thread each), as `kokoro-say -f book.md -o book.m4b`.

For each: wall time, CPU time (the process and its children), and peak memory (the
summed RSS of the process tree, sampled every 0.2 s). For the M4B: the integrated
loudness of each chapter (BS.1770, cut at its marks) and their spread in LU.
Timings mean something only on a quiet machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from procs import machine, tree
from texts import long_text

# Prose for a minute of speech, about (Kokoro reads some 165 words a minute).
_CHARS_PER_MINUTE = 950


def build_book(minutes: float) -> tuple[str, str]:
    """The book as Markdown (chapters under headings) and as plain text (the same words)."""
    chapters = max(3, round(minutes / 5))
    chars = int(minutes * _CHARS_PER_MINUTE / chapters)
    markdown, plain = [], []
    for number in range(1, chapters + 1):
        body = long_text(chars)
        markdown.append(f"# Chapter {number}\n\n{body}")
        plain.append(f"Chapter {number}.\n\n{body}")
    return "\n\n".join(markdown) + "\n", "\n\n".join(plain) + "\n"


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run(args: list[str]) -> dict[str, float]:
    """One kokoro-say run: wall and CPU seconds, peak RSS of its tree (MiB)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "kokoro_say.main", *args, "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], sum(_rss_kb(p) for p in tree(process.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    err = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"kokoro-say {' '.join(args)} failed:\n{err}")
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mb": round(peak[0] / 1024),
    }


def chapter_loudness(m4b: Path) -> list[float]:
    """Each chapter's integrated loudness (LUFS), cut at the M4B's marks."""
    import av
    import numpy as np

    from wyoming_kokoro.synthesis.loudness import measure

    with av.open(str(m4b)) as container:
        starts = [float(c["start"] * c["time_base"]) for c in container.chapters()]
        frames = [f.to_ndarray().reshape(-1) for f in container.decode(audio=0)]
    audio = (np.clip(np.concatenate(frames), -1, 1) * 32767).astype(np.int16)
    bounds = [round(s * 24000) for s in starts] + [len(audio)]
    return [round(measure(audio[a:b]), 2) for a, b in itertools.pairwise(bounds) if b > a]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the book")
    parser.add_argument("--keep", type=Path, help="write the book and outputs here")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-long-form-"))
    folder.mkdir(parents=True, exist_ok=True)
    markdown, plain = build_book(args.minutes)
    (folder / "book.md").write_text(markdown, encoding="utf-8")
    (folder / "book.txt").write_text(plain, encoding="utf-8")

    one = run(["-f", str(folder / "book.txt"), "-o", str(folder / "one.wav")])
    many = run(["-f", str(folder / "book.md"), "-o", str(folder / "book.m4b")])
    lufs = chapter_loudness(folder / "book.m4b")
    import soundfile

    results = {
        "machine": machine(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "minutes_of_speech": round(soundfile.info(str(folder / "one.wav")).duration / 60, 1),
        "one_process": one,
        "long_form": many,
        "speedup": round(one["wall_s"] / many["wall_s"], 2),
        "chapter_lufs": lufs,
        "lufs_spread_lu": round(max(lufs) - min(lufs), 2) if lufs else None,
    }
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"book: {results['minutes_of_speech']} min of speech, {len(lufs)} chapters")
    print(f"{'':<14}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}")
    for name, row in (("one process", one), ("long form", many)):
        print(f"{name:<14}{row['wall_s']:>8}{row['cpu_s']:>8}{row['peak_rss_mb']:>10}")
    print(f"speed-up (wall): {results['speedup']}x on {results['cpus_usable']} CPUs")
    print(f"chapter loudness (LUFS): {lufs}; spread {results['lufs_spread_lu']} LU")


if __name__ == "__main__":
    main()
