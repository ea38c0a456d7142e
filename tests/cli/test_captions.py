"""kokoro-say --captions: word times as subtitles, read back by real subtitle parsers
(srt, webvtt-py); a path that cannot be written fails before anything is spoken."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile
import srt
import webvtt
from hypothesis import given, settings
from hypothesis import strategies as st
from kokoro_say.captions import render

from wyoming_kokoro.timeline import Timeline, WordTime

TEXT = "It is 21°C at 7:30 pm. The garage door has been open — close it now."
CUES = ["It is 21°C at 7:30 pm.", "The garage door has been open — close it now."]


def say(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )


@settings(max_examples=100, deadline=None)
@given(
    starts=st.lists(st.integers(0, 60_000), min_size=1, max_size=6),
    samples=st.lists(st.integers(0, 10**7), min_size=1, max_size=3),
)
def test_json_word_times_are_milliseconds(starts: list[int], samples: list[int]) -> None:
    # Each call's words are placed after the audio before them (samples / 24 kHz):
    # the sums carried float noise into the file (0.29000000000000004).
    timeline = Timeline()
    for offset in samples:
        words = [WordTime(f"w{ms}", ms / 1000, (ms + 137) / 1000) for ms in starts]
        timeline.add(words, offset / 24000)
    rows = json.loads(render(timeline.words, "json"))
    expected = [offset / 24000 + ms / 1000 for offset in samples for ms in starts]
    for row, start in zip(rows, expected, strict=True):
        assert round(row["start_time"], 3) == row["start_time"], row
        assert round(row["end_time"], 3) == row["end_time"], row
        assert abs(row["start_time"] - start) <= 0.0005 + 1e-9


def test_a_caption_file_that_fails_to_be_written_says_so_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kokoro_say.captions import CaptionFile

    captions = CaptionFile(str(tmp_path / "a.srt"))
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/somewhere/.a.srt.partial")
    monkeypatch.setattr(os, "replace", lambda *_: (_ for _ in ()).throw(full))
    with pytest.raises(OSError) as caught:
        captions.write([WordTime("Hello.", 0.1, 0.5)])
    assert str(caught.value) == (
        f"cannot write captions to {tmp_path / 'a.srt'}: no space left on device"
    )
    captions.discard()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.model
def test_srt_cues_follow_the_sentences_after_the_lead_silence(tmp_path: Path) -> None:
    audio, captions = tmp_path / "out.wav", tmp_path / "out.srt"
    result = say(TEXT, "-o", str(audio), "--captions", str(captions), "--lead-silence", "500")
    assert result.returncode == 0, result.stderr
    cues = list(srt.parse(captions.read_text(encoding="utf-8")))
    assert [c.content for c in cues] == CUES
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
    assert [c.text for c in cues] == CUES
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


@pytest.mark.model
@pytest.mark.slow
def test_captions_on_a_fresh_install_time_every_word(tmp_path: Path) -> None:
    # Nothing in the cache or the data dir: the embedded model is assembled again and
    # the cut that word times come from is made by the first run (a minute of CPU).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOKORO_", "XDG_"))}
    env.update(
        KOKORO_CACHE_DIR=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
    )
    audio = tmp_path / "out.wav"
    first = say(TEXT, "-o", str(audio), "--captions", str(tmp_path / "a.srt"), env=env)
    assert first.returncode == 0, first.stderr
    assert "preparing the model for word times" in first.stderr
    assert "--decode" not in first.stderr, first.stderr
    cues = list(srt.parse((tmp_path / "a.srt").read_text(encoding="utf-8")))
    assert [c.content for c in cues] == CUES
    assert all(c.start < c.end for c in cues) and cues[0].end <= cues[1].start
    # Later runs find the cut made, and time every word (a vtt file's cues are
    # read in test_vtt_at_a_faster_speed_and_json_words).
    words = tmp_path / "a.json"
    second = say(TEXT, "-o", str(audio), "--captions", str(words), "-q", env=env)
    assert second.returncode == 0 and second.stderr == "", second.stderr
    rows = json.loads(words.read_text(encoding="utf-8"))
    assert len(rows) == len(TEXT.split()) - 1  # the dash goes with "open"
    for row in rows:
        start, end = row["start_time"], row["end_time"]
        assert start is not None and end is not None and start < end, row
        assert round(start, 3) == start and round(end, 3) == end, row  # milliseconds
    assert rows[-1]["end_time"] <= soundfile.info(audio).duration


@pytest.mark.model
def test_a_cut_under_way_elsewhere_is_waited_for_not_made_twice(tmp_path: Path) -> None:
    # A server cutting the model in the same cache holds its lock: kokoro-say waits
    # for it and uses its parts (here the run's own, put in place while it waits).
    made = [p for p in Path(os.environ["KOKORO_CACHE_DIR"]).glob("split*") if p.is_dir()]
    assert made, "the run's cache has no cut model"
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "KOKORO_CACHE_DIR": str(cache)}
    outputs = ["-o", str(tmp_path / "a.wav"), "--captions", str(tmp_path / "a.json")]
    with (cache / f"{made[0].name}.cut.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        process = subprocess.Popen(
            [sys.executable, "-m", "kokoro_say.main", "Hello there.", "--debug", *outputs],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            said = []
            assert process.stderr is not None
            for line in process.stderr:
                said.append(line)
                assert not [p for p in cache.iterdir() if p.name.endswith(".part")], said
                if "holds the model's cut lock" in line:
                    break
            else:
                pytest.fail("".join(said))
            (cache / made[0].name).mkdir()
            for part in made[0].iterdir():
                (cache / made[0].name / part.name).symlink_to(part.resolve())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        _, rest = process.communicate(timeout=300)
    assert process.returncode == 0, "".join(said) + rest
    rows = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert [r["word"] for r in rows] == ["Hello", "there."]
    assert all(r["start_time"] is not None for r in rows)


def test_captions_with_a_model_that_cannot_be_cut_are_refused_before_speaking(
    tmp_path: Path,
) -> None:
    # Word times come from the cut, made only for the published files: with another
    # model there would be no times, and an empty caption file is never the answer.
    from wyoming_kokoro.catalog.assets import resolve

    own = tmp_path / "mine.onnx"
    own.symlink_to(resolve(None, None, []).model)
    audio, captions = tmp_path / "a.wav", tmp_path / "a.srt"
    result = say("Hello.", "-o", str(audio), "--captions", str(captions), "--model", str(own))
    assert result.returncode == 1, result.stderr
    assert "mine.onnx is not one" in result.stderr and len(result.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.onnx"]


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
