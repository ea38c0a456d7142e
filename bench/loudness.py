"""Loudness of every embedded voice and two blends, before and after leveling.

    .venv/bin/python bench/loudness.py

Meter: pyloudnorm (ITU-R BS.1770-4 integrated loudness). "Before" is the engine's own
output; "after" is that output through loudness.py as the worker applies it. The
figures for the table in loudness.KNOWN_LUFS come from the "before" column here.
"""

from __future__ import annotations

import numpy as np

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.loudness import TARGET_LUFS, Leveler, apply_gain, measure, true_peak

TEXTS = (
    "The garage door has been open for ten minutes, and the lights in the kitchen are on.",
    "Good morning! Today will be cloudy with a chance of rain in the afternoon.",
)
BLENDS = ("jf_alpha(1)+jm_kumo(1)", "jf_nezumi(2)+jf_tebukuro(1)")


def main() -> None:
    engine = Engine(resolve(None, None, []))
    engine.warm_up()
    leveler = Leveler(None, "bench")
    rows = []
    for name in (*engine.voice_names, *BLENDS):
        spec = engine.voice(name)
        pcm = np.concatenate([a for t in TEXTS for a in engine.speak(t, spec, 1.0, "en-us")])
        out = apply_gain(pcm, leveler.gain(spec))
        peak = 20 * np.log10(true_peak(out.astype(np.float64) / 32768).max())
        rows.append((name, measure(pcm), measure(out), peak))
    print("| voice | before (LUFS) | after (LUFS) | after, true peak (dBTP) |")
    print("|---|---|---|---|")
    for name, before, after, peak in rows:
        print(f"| {name} | {before:.2f} | {after:.2f} | {peak:.2f} |")
    befores = [r[1] for r in rows]
    afters = [r[2] for r in rows]
    print(
        f"\nspread (max - min): before {max(befores) - min(befores):.2f} LU, "
        f"after {max(afters) - min(afters):.2f} LU; worst distance from {TARGET_LUFS} LUFS "
        f"after: {max(abs(a - TARGET_LUFS) for a in afters):.2f} LU"
    )


if __name__ == "__main__":
    main()
