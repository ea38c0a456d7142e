"""kokoro-say off a terminal: a line every few seconds says how far a long export is."""

from __future__ import annotations

import io

from kokoro_say.progress import PieceLines


def test_a_line_every_few_seconds_and_none_at_the_end() -> None:
    now = [0.0]
    out = io.StringIO()
    lines = PieceLines(10, every=5, clock=lambda: now[0], stream=out)
    for done, at in [(1, 1.0), (2, 4.9), (3, 5.0), (4, 7.0), (5, 10.1), (10, 30.0)]:
        now[0] = at
        lines(done)
    assert out.getvalue().splitlines() == [
        "kokoro-say: 3 of 10 pieces spoken (30 %)",
        "kokoro-say: 5 of 10 pieces spoken (50 %)",
    ]
