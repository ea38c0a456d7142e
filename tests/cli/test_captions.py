"""kokoro-say --captions: word times as subtitles, read back by real subtitle parsers
(srt, webvtt-py); a path that cannot be written fails before anything is spoken."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile
import srt
import webvtt

TEXT = "It is 21°C at 7:30 pm. The garage door has been open — close it now."


def say(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.model
def test_srt_cues_follow_the_sentences_after_the_lead_silence(tmp_path: Path) -> None:
    audio, captions = tmp_path / "out.wav", tmp_path / "out.srt"
    result = say(TEXT, "-o", str(audio), "--captions", str(captions), "--lead-silence", "500")
    assert result.returncode == 0, result.stderr
    cues = list(srt.parse(captions.read_text(encoding="utf-8")))
    assert [c.content for c in cues] == [
        "It is 21°C at 7:30 pm.",
        "The garage door has been open — close it now.",
    ]
    first, last = cues[0].start.total_seconds(), cues[-1].end.total_seconds()
    assert 0.5 <= first < 0.7  # the speech begins after the lead silence
    assert cues[0].end < cues[1].start
    assert last <= soundfile.info(audio).duration
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.srt", "out.wav"]


@pytest.mark.model
def test_vtt_at_a_faster_speed_and_json_words(tmp_path: Path) -> None:
    audio, vtt, words = tmp_path / "out.flac", tmp_path / "out.vtt", tmp_path / "w.json"
    result = say(TEXT, "-o", str(audio), "--captions", str(vtt), "--speed", "1.5")
    assert result.returncode == 0, result.stderr
    cues = webvtt.read(str(vtt)).captions
    assert cues[0].text == "It is 21°C at 7:30 pm."
    assert cues[-1].end_in_seconds <= soundfile.info(audio).duration
    result = say(TEXT, "-o", str(tmp_path / "slow.wav"), "--captions", str(words))
    assert result.returncode == 0, result.stderr
    rows = json.loads(words.read_text(encoding="utf-8"))
    rows = [{**r, "word": r["word"].replace(" ", "\0")} for r in rows]
    # A dash is not spoken: it goes with the word before it.
    assert [r["word"] for r in rows] == TEXT.replace("open —", "open\0—").split()
    slow = rows[-1]["start_time"]
    fast = webvtt.read(str(vtt)).captions[-1].end_in_seconds
    assert fast < slow  # said 1.5 times as fast: the last word starts sooner than at 1.0


@pytest.mark.parametrize(
    ("name", "said"),
    [("missing/out.srt", "no directory"), ("out.txt", "name it .srt, .vtt or .json")],
)
def test_a_caption_path_that_cannot_be_written_fails_in_one_line(
    tmp_path: Path, name: str, said: str
) -> None:
    result = say("Hello.", "-o", str(tmp_path / "a.wav"), "--captions", str(tmp_path / name))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1 and said in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing spoken, nothing left
