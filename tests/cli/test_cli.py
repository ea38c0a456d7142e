"""kokoro-say end to end: a real subprocess, the real model, real files."""

from __future__ import annotations

import io
import os
import select
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

TEXT = "The garage door has been open for ten minutes."


def say(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        input=stdin.encode() if stdin is not None else None,
        capture_output=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_wav_round_trip_is_intelligible(tmp_path: Path, listener) -> None:
    out = tmp_path / "out.wav"
    result = say(TEXT, "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(out, dtype="int16")
    assert rate == 24000 and audio.ndim == 1
    listener.check_later(TEXT, audio)
    assert list(tmp_path.iterdir()) == [out]  # no temporary files left behind


@pytest.mark.model
@pytest.mark.parametrize("fmt", ["flac", "ogg", "mp3"])
def test_other_formats_from_the_extension(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    result = say("The back door is open.", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    info = soundfile.info(out)
    assert info.format == fmt.upper() if fmt != "ogg" else info.format == "OGG"
    assert info.samplerate == 24000 and 1.0 < info.duration < 4.0


@pytest.mark.model
def test_stdin_to_raw_pcm_on_stdout_with_speed(tmp_path: Path) -> None:
    slow = say("-", "-o", "-", "--speed", "0.7", stdin="The back door is open.")
    fast = say("-", "-o", "-", "--speed", "1.4", stdin="The back door is open.")
    assert slow.returncode == 0 and fast.returncode == 0, slow.stderr
    assert len(slow.stdout) % 2 == 0
    assert len(fast.stdout) < 0.7 * len(slow.stdout)


def test_file_input_with_markdown(tmp_path: Path, listener) -> None:
    source = tmp_path / "note.md"
    source.write_text("# Reminder\n\n- The **back door** is *open*.\n", encoding="utf-8")
    out = tmp_path / "note.wav"
    result = say("-f", str(source), "-o", str(out))
    assert result.returncode == 0, result.stderr
    audio, _ = soundfile.read(out, dtype="int16")
    listener.check_later("Reminder. The back door is open.", audio, unheard="asterisk|hash")


def test_list_voices_shows_catalog_and_installed(tmp_path: Path) -> None:
    result = say("--list-voices")
    assert result.returncode == 0
    lines = result.stdout.decode().splitlines()
    assert lines[0].split() == ["name", "language", "gender", "grade", "installed"]
    kumo = next(line for line in lines if line.startswith("jm_kumo"))
    assert kumo.split() == ["jm_kumo", "ja_JP", "male", "C-", "yes"]
    assert any(line.startswith("af_heart") and line.endswith("no") for line in lines)
    assert len(lines) == 55


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["hello", "-o", "{tmp}/x.wav", "--voice", "af_bela"], None, "unknown voice"),
        (["-f", "{tmp}/missing.txt", "-o", "{tmp}/x.wav"], None, "cannot read"),
        (["   ", "-o", "{tmp}/x.wav"], None, "empty"),
        (["-", "-o", "{tmp}/x.wav"], "", "empty"),
        (["hello", "-o", "{tmp}/no/such/dir/x.wav"], None, "does not exist"),
        (["hello", "-o", "{tmp}/x.xyz"], None, "audio format"),
        (
            ["hello", "-o", "{tmp}/x.wav", "--model", "{tmp}/none.onnx"],
            None,
            "model file not found",
        ),
        (["hello", "-o", "{tmp}/x.wav", "--speed", "3"], None, "speed"),
        (["hello", "-o", "{tmp}/x.wav", "--max-call-tokens", "20"], None, "max-call-tokens"),
        (["hello", "-o", "{tmp}/x.wav", "--lang", "tlh"], None, "unsupported language"),
        (["hello"], None, "no output"),
    ],
)
def test_errors_are_one_clear_line_and_leave_no_file(
    tmp_path: Path, args: list[str], stdin: str | None, message: str
) -> None:
    result = say(*[a.format(tmp=tmp_path) for a in args], stdin=stdin)
    assert result.returncode != 0
    err = result.stderr.decode()
    assert message in err, err
    assert "Traceback" not in err
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".wav", ".xyz")]


def test_corrupt_model_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    model = tmp_path / "kokoro-v1.0.int8.onnx"
    with model.open("wb") as file:
        file.truncate(92_361_271)
    result = say("hello there", "-o", str(tmp_path / "x.wav"), "--model", str(model))
    assert result.returncode != 0
    assert "corrupt" in result.stderr.decode() and "Traceback" not in result.stderr.decode()
    assert not (tmp_path / "x.wav").exists()


def _last_sentence(audio: np.ndarray, rate: int) -> np.ndarray:
    """The audio after the last pause of at least 0.2 s that ends 1 s before the end."""
    hop = rate // 100
    level = np.abs(audio[: len(audio) // hop * hop].reshape(-1, hop)).max(axis=1)
    quiet = level < 200
    start, run = 0, 0
    for frame, silent in enumerate(quiet[: len(quiet) - 100]):
        run = run + 1 if silent else 0
        if run >= 20:
            start = frame
    return np.asarray(audio[start * hop :])


@pytest.mark.slow
def test_long_text_is_spoken_to_the_end(tmp_path: Path, listener) -> None:
    body = " ".join(
        f"Sensor {n} in the hallway reports that everything is quiet and normal." for n in range(2)
    )
    text = body + " Finally, the front door is locked."
    out = tmp_path / "long.wav"
    result = say("-o", str(out), "-q", text)
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(out, dtype="int16")
    seconds = len(audio) / rate
    assert len(text.split()) / 4.0 < seconds < len(text.split()) / 1.5
    listener.check_later("Finally, the front door is locked.", _last_sentence(audio, rate))


@pytest.mark.slow
def test_numbers_units_and_money_are_spoken_as_words(tmp_path: Path, listener) -> None:
    # Heard as well as the model itself reading the words written out: espeak alone
    # reads "21.5 °C", "km/h", "$3.99" and "VIII" otherwise (text/test_normalize.py).
    text = "It is 21.5 °C outside. The wind is at 12 km/h. It costs $3.99. Henry VIII was a king."
    expected = (
        "it is twenty one point five degrees celsius outside the wind is at twelve kilometers "
        "per hour it costs three dollars and ninety nine cents henry the eighth was a king"
    )
    out = tmp_path / "numbers.wav"
    result = say(text, "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    audio, _ = soundfile.read(out, dtype="int16")
    listener.check_later(expected, audio)


def test_download_offline_is_one_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = say(
        "--download",
        "int8",
        "--download-url",
        f"http://127.0.0.1:{port}",
        "--data-dir",
        str(tmp_path),
    )
    assert result.returncode != 0
    err = result.stderr.decode()
    assert "offline" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_lexicon_in_the_data_dir_is_used(tmp_path: Path, listener) -> None:
    (tmp_path / "lexicon.txt").write_text("# respellings\nzorp  garage door\n", encoding="utf-8")
    out = tmp_path / "lexicon.wav"
    result = say("The zorp is open.", "-o", str(out), "-q", "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    audio, _ = soundfile.read(out, dtype="int16")
    listener.check_later("The garage door is open.", audio)


def test_help_says_the_defaults_and_where_the_docs_are() -> None:
    from click.testing import CliRunner
    from kokoro_say.main import main

    shown = " ".join(CliRunner().invoke(main, ["--help"], terminal_width=200).output.split())
    assert "--format [wav|flac|ogg|mp3|raw] Audio format" in shown, shown
    assert "preset; default: af_heart, else jm_kumo." in shown, shown
    assert "default: ~/.local/share/wyoming-kokoro." in shown, shown
    # Installed from a package there is no docs/ folder to read: the docs online.
    assert "https://github.com/wyoming-kokoro/wyoming-kokoro/blob/main/docs/options.md" in shown


def test_max_call_tokens_is_read_from_the_environment(tmp_path: Path) -> None:
    # The same variable as the server's; out of range it is refused before any work.
    env = {**os.environ, "KOKORO_MAX_CALL_TOKENS": "9999"}
    result = subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", "Hello.", "-o", str(tmp_path / "a.wav")],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2 and b"max-call-tokens" in result.stderr, result.stderr
    assert not (tmp_path / "a.wav").exists()


# ---------------------------------------------------------------- where the audio goes
# These drive the output module directly: no model, a second of silence.

SECOND = np.zeros(24000, dtype=np.int16)


def write_second(path: Path | str, fmt: str = "wav") -> None:
    from kokoro_say.output import AudioSink

    with AudioSink(str(path), fmt) as sink:
        sink.write(SECOND)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_file_gets_the_umask_mode(tmp_path: Path, umask_022: None) -> None:
    write_second(tmp_path / "a.wav")
    assert stat.S_IMODE((tmp_path / "a.wav").stat().st_mode) == 0o644
    os.umask(0o027)
    write_second(tmp_path / "b.raw", "raw")
    assert stat.S_IMODE((tmp_path / "b.raw").stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "b.raw"]


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    out = tmp_path / "a.wav"
    out.write_bytes(b"old")
    out.chmod(0o604)  # not what the umask would give
    write_second(out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o604
    assert soundfile.info(out).frames == 24000


def test_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "a.wav"
    target.write_bytes(b"old")
    link = tmp_path / "link.wav"
    link.symlink_to(target)
    write_second(link)
    assert link.is_symlink() and link.resolve() == target
    assert soundfile.info(target).frames == 24000
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["a.wav"]  # no temp file left
    dangling = tmp_path / "dangling.wav"
    dangling.symlink_to(tmp_path / "real" / "new.wav")
    write_second(dangling)
    assert dangling.is_symlink() and soundfile.info(tmp_path / "real" / "new.wav").frames == 24000


def read_fifo_while(fifo: Path, work: Callable[[], None]) -> bytes:
    """Run ``work`` while a reader drains ``fifo``; what the reader got."""
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    keep_open = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # no EOF before work writes
    got: list[bytes] = []

    def drain() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            select.select([reader], [], [], 0.1)
            try:
                chunk = os.read(reader, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return
            got.append(chunk)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        work()
    finally:
        os.close(keep_open)
        thread.join(35)
        os.close(reader)
    return b"".join(got)


@pytest.mark.parametrize("fmt", ["wav", "flac", "raw"])
def test_a_fifo_is_written_to_not_replaced(tmp_path: Path, fmt: str) -> None:
    fifo = tmp_path / f"pipe.{fmt}"
    os.mkfifo(fifo)
    data = read_fifo_while(fifo, lambda: write_second(fifo, fmt))
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]
    if fmt == "raw":
        assert data == SECOND.tobytes()
    else:
        audio, rate = soundfile.read(io.BytesIO(data), dtype="int16")
        assert rate == 24000 and len(audio) == 24000


def test_a_character_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    device = tmp_path / "null"
    try:  # a copy of /dev/null: the code under test may not replace the real one
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as err:
        pytest.skip(f"cannot make a device node here: {err}")
    for fmt in ("wav", "mp3", "raw"):
        write_second(device, fmt)
        assert stat.S_ISCHR(device.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_a_failed_run_leaves_no_partial_file(tmp_path: Path) -> None:
    from kokoro_say.output import AudioSink

    existing = tmp_path / "old.wav"
    existing.write_bytes(b"keep me")
    for path in (tmp_path / "new.wav", existing, tmp_path / "new.raw"):
        with pytest.raises(KeyboardInterrupt), AudioSink(str(path), path.suffix[1:]) as sink:
            sink.write(SECOND)
            raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["old.wav"]
    assert existing.read_bytes() == b"keep me"


def test_a_directory_is_refused_before_any_work(tmp_path: Path) -> None:
    from kokoro_say.output import AudioSink

    with pytest.raises(OSError, match="is a directory"):
        AudioSink(str(tmp_path), "wav")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_close_removes_the_temp_file_and_keeps_the_first_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kokoro_say.output import AudioSink

    real_close = soundfile.SoundFile.close

    def broken_close(self: soundfile.SoundFile) -> None:
        if not self.closed:  # as when flushing the last block fails
            real_close(self)
            raise soundfile.SoundFileRuntimeError("close failed")

    monkeypatch.setattr(soundfile.SoundFile, "close", broken_close)
    out = tmp_path / "a.flac"
    with pytest.raises(ValueError, match="the first error"), AudioSink(str(out), "flac") as sink:
        sink.write(SECOND)
        raise ValueError("the first error")
    assert list(tmp_path.iterdir()) == []
    # Without an earlier error, the close error is the one raised: one line, an OSError
    # that names the file (kokoro-say prints OSErrors as one line).
    with (
        pytest.raises(OSError, match=r"a\.flac.*close failed"),
        AudioSink(str(out), "flac") as sink,
    ):
        sink.write(SECOND)
    assert list(tmp_path.iterdir()) == []


def test_a_libsndfile_error_is_one_line_naming_the_file(tmp_path: Path) -> None:
    # A file-size limit stands in for a full disk: libsndfile fails its write.
    script = (
        "import resource, sys, numpy as np\n"
        "from kokoro_say.output import AudioSink\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    with AudioSink(sys.argv[1], 'wav') as sink:\n"
        "        sink.write(np.zeros(48000, dtype=np.int16))\n"
        "except OSError as err:\n"
        "    print(err)\n"
    )
    out = tmp_path / "full.wav"
    # Not measured by coverage: the size limit would fail its data file's write too.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    result = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert result.returncode == 0 and result.stderr == b"", result.stderr.decode()
    message = result.stdout.decode().strip()
    assert "full.wav" in message and "\n" not in message, message
    assert list(tmp_path.iterdir()) == []


def test_an_mp3_read_back_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    # libmpg123 prints "part2_3_length ... too large" on fd 2 while the file is read
    # back a block at a time, for speech as for this noise that rises and falls.
    from kokoro_say.output import AudioSink

    rng = np.random.default_rng(0)
    level = np.repeat(rng.random(60) ** 2, 1200)
    noise = rng.standard_normal(72000) * level
    pcm = (noise / np.abs(noise).max() * 20000).astype(np.int16)
    with AudioSink(str(tmp_path / "a.mp3"), "mp3") as sink:
        sink.write(pcm)
    assert capfd.readouterr().err == ""
    assert soundfile.info(tmp_path / "a.mp3").frames >= len(pcm)


def test_an_unwritable_place_is_named_with_the_reason_in_words() -> None:
    # Creating a file in sysfs is refused (permission, or a read-only file system).
    result = say("hello", "-o", "/sys/x.wav")
    err = result.stderr.decode().strip()
    assert result.returncode == 1
    assert err.startswith("Error: cannot write /sys/x.wav: "), err
    assert "Errno" not in err and ".x.wav" not in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize(
    ("name", "fmt"), [("y.ogg", "mp3"), ("y.wav", "flac"), ("y.mp3", "raw"), ("y.raw", "wav")]
)
def test_a_format_that_contradicts_the_extension_is_refused(
    tmp_path: Path, name: str, fmt: str
) -> None:
    result = say("hello", "-o", str(tmp_path / name), "--format", fmt)
    err = result.stderr.decode()
    assert result.returncode == 2 and f"--format {fmt}" in err and name in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_raw_extension_is_raw_pcm() -> None:
    from kokoro_say.formats import format_for

    assert format_for("out.raw", None) == "raw" and format_for("out.pcm", None) == "raw"
    assert format_for("-", None) == "raw" and format_for("out", "mp3") == "mp3"


@pytest.mark.model
def test_wav_to_stdout_is_a_wav_stream(tmp_path: Path) -> None:
    result = say("The back door is open.", "-o", "-", "--format", "wav", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # no file named "-"
    audio, rate = soundfile.read(io.BytesIO(result.stdout), dtype="int16")
    assert rate == 24000 and 1.0 < len(audio) / rate < 4.0


@pytest.mark.model
def test_wav_to_stdout_redirected_to_a_file_gets_exact_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kokoro_say.output import AudioSink

    monkeypatch.chdir(tmp_path)  # where a file named "-" would land

    out = tmp_path / "redirected.wav"
    with out.open("wb") as file:
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(file))  # kokoro-say -o - > file
        with AudioSink("-", "wav") as sink:
            sink.write(SECOND)
            sink.write(SECOND)
        monkeypatch.undo()
    data = out.read_bytes()
    assert len(data) == 44 + 4 * 24000
    assert data[4:8] == (len(data) - 8).to_bytes(4, "little")
    assert data[40:44] == (4 * 24000).to_bytes(4, "little")


@pytest.mark.model
@pytest.mark.parametrize("fmt", ["wav", "raw"])
def test_dev_stdout_style_paths_to_a_pipe_are_written_to(fmt: str) -> None:
    # -o /dev/stdout names a pipe through a /proc link that resolves to no real path.
    read_end, write_end = os.pipe()
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.append(read_all(read_end)), daemon=True)
    thread.start()
    try:
        write_second(f"/dev/fd/{write_end}", fmt)
    finally:
        os.close(write_end)
        thread.join(30)
        os.close(read_end)
    data = b"".join(got)
    assert data.endswith(SECOND.tobytes()) and len(data) == 48000 + (44 if fmt == "wav" else 0)


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_presets_volume_and_silence_reach_the_file(tmp_path: Path, listener) -> None:
    # One run each: the default, then a preset from the data dir that is slower and
    # quieter, with silence of its own before and after the speech (which wins over
    # the flags').
    (tmp_path / "presets.yaml").write_text(
        "calm:\n  voice: jm_kumo\n  speed: 0.8\n  volume: 0.5\n"
        "  lead_silence: 400\n  tail_silence: 300\n",
        encoding="utf-8",
    )
    text = "The back door is open."
    plain, calm = tmp_path / "plain.wav", tmp_path / "calm.wav"
    assert say(text, "-o", str(plain), "-q").returncode == 0
    listed = say("--list-voices", "--data-dir", str(tmp_path))
    assert listed.returncode == 0 and "calm" in listed.stdout.decode()
    result = say(
        text,
        "-o",
        str(calm),
        "-q",
        "--data-dir",
        str(tmp_path),
        "--voice",
        "calm",
        "--lead-silence",
        "100",
        "--tail-silence",
        "100",
    )
    assert result.returncode == 0, result.stderr
    a, rate = soundfile.read(plain, dtype="int16")
    b, _ = soundfile.read(calm, dtype="int16")
    loud, plain_loud = np.flatnonzero(np.abs(b) > 300), np.flatnonzero(np.abs(a) > 300)
    assert loud[0] >= 0.4 * rate and len(b) - loud[-1] >= 0.3 * rate  # the silences
    speech, plain_speech = b[loud[0] : loud[-1]], a[plain_loud[0] : plain_loud[-1]]
    assert len(speech) > 1.1 * len(plain_speech)  # speed 0.8
    level = np.sqrt(np.mean(speech.astype(float) ** 2))
    plain_level = np.sqrt(np.mean(plain_speech.astype(float) ** 2))
    assert 0.35 * plain_level < level < 0.7 * plain_level  # volume 0.5: about -6 dB
    listener.check_later(text, b, speed=0.8)


def test_only_partial_files_of_gone_writers_on_this_host_are_swept(tmp_path: Path) -> None:
    from kokoro_say import partial

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    gone = int(ended.stdout)  # a process that has ended: its pid is free
    _, mine = partial.make(str(tmp_path / "a.wav"))
    host = Path(mine).name.split("-")[3]
    names = {
        f".a.wav.kokoro-say-{gone}-{host}-abcdefgh": False,  # killed here: swept
        f".a.wav.kokoro-say-{gone}-00000000-abcdefgh": True,  # another host's
        f".a.wav.kokoro-say-{os.getppid()}-{host}-abcdefgh": True,  # its writer is alive
        f".b.wav.kokoro-say-{gone}-{host}-abcdefgh": True,  # another file's
        f".a.wav.{gone}.bak": True,  # not ours at all
        "a.wav": True,
    }
    for name in names:
        (tmp_path / name).write_bytes(b"")
    assert partial.sweep(str(tmp_path), "a.wav") == [
        name for name, kept in names.items() if not kept
    ]
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {name for name, kept in names.items() if kept} | {Path(mine).name}
