"""espeak-ng loaded in place (the first backend) or from a cached copy (the others):
the same phonemes as phonemizer's temporary copies, and nothing in the temporary dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_RUN = """
import json, sys
from kokoro_onnx.tokenizer import Tokenizer
from phonemizer.backend import EspeakBackend
if sys.argv[1] == "slots":
    from wyoming_kokoro.text.g2p.espeak_library import install
    install()
texts = [("Hello there, how are you? 42 cats.", "en-us"), ("Bonjour, comment allez-vous?",
    "fr-fr"), ("The colour of the harbour.", "en-gb"), ("Hola, que tal?", "es")]
tokenizer = Tokenizer()
one_at_a_time = [tokenizer.phonemize(text, lang) for text, lang in texts * 5]
# Backends alive at the same time, used in turn: each needs a library of its own.
held = [EspeakBackend(lang, preserve_punctuation=True, with_stress=True) for _, lang in texts]
together = [b.phonemize([text])[0] for _ in range(3) for b, (text, _) in zip(held, texts)]
print(json.dumps([one_at_a_time, together]))
"""


def _run(
    mode: str, tmp_path: Path, fresh_tmp: bool = False
) -> tuple[list[list[str]], list[str], list[Path]]:
    tmpdir, cache = tmp_path / f"tmp-{mode}{'-again' if fresh_tmp else ''}", tmp_path / mode
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir), "KOKORO_CACHE_DIR": str(cache)}
    env["ORT_DISABLE_TELEMETRY"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", _RUN, mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    copies = sorted(cache.rglob("libespeak*")) if cache.exists() else []
    return json.loads(result.stdout), os.listdir(tmpdir), copies


def test_slots_phonemize_as_temporary_copies_do_and_leave_no_temporary_files(
    tmp_path: Path,
) -> None:
    copied, _, _ = _run("copies", tmp_path)
    slotted, left, cached = _run("slots", tmp_path)
    assert slotted == copied
    assert left == []
    # Backends alive at once (phonemizer keeps up to 8, one per language): the first
    # uses the library in place, each other a cached copy of its own, made once.
    slots = [int(path.parent.name) for path in cached]
    assert slots == list(range(1, len(slots) + 1)) and 3 <= len(slots) <= 8, cached
    made = {path: path.stat().st_mtime_ns for path in cached}
    again, left, cached = _run("slots", tmp_path, fresh_tmp=True)
    assert again == copied and left == []
    assert {path: path.stat().st_mtime_ns for path in cached} == made  # reused, not redone
