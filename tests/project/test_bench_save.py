"""bench/run.py --save rewrites RESULTS.md from results.json, keeping what was written by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from run import keep_written


def test_sections_written_by_hand_survive_a_save() -> None:
    old = (
        "## Benchmarks\n\nold header\n\n### A. Core\n\nold table\n\n"
        "### W. Windows (by hand)\n\nW1 notes\n\n#### W2\n\nmore notes\n\n"
        "### Conditions\n\nold conditions\n"
    )
    new = "## Benchmarks\n\nnew header\n\n### A. Core\n\nnew table\n\n### Conditions\n\nnew\n"
    saved = keep_written(old, new)
    assert "new table" in saved and "old table" not in saved
    assert "W1 notes" in saved and "more notes" in saved
    assert saved.index("more notes") < saved.index("### Conditions")
    assert saved.count("### Conditions") == 1 and "old conditions" not in saved
    assert keep_written("", new) == new
    assert keep_written(saved, new) == saved  # saving again changes nothing
