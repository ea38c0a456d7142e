"""The synthesis core: onnxruntime session + voices → PCM, one piece at a time.

Used unchanged by the server's worker process and by `kokoro-say`. Importing
this module is cheap; the model is loaded when an `Engine` is built.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS
from wyoming_kokoro.catalog.assets import Assets, check_file
from wyoming_kokoro.catalog.voices import VoiceSpec, parse_voice
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.cut_audio import CutAudio
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.kokoro_model import KokoroModel
from wyoming_kokoro.synthesis.loading import ModelLoading
from wyoming_kokoro.synthesis.planner import Planner
from wyoming_kokoro.synthesis.prior import VoicePriors
from wyoming_kokoro.synthesis.stopping import Interrupted, Stops
from wyoming_kokoro.synthesis.timing import CallClock
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.normalize import normalize
from wyoming_kokoro.text.normalizing import Normalization
from wyoming_kokoro.timeline import WordTime

_LOGGER = logging.getLogger(__name__)


class Engine:
    """A loaded Kokoro model with its voices."""

    def __init__(
        self,
        assets: Assets,
        settings: EngineSettings | None = None,
        loading: ModelLoading | None = None,
        lexicon: dict[str, str] | None = None,
    ) -> None:
        """Load the model (or take the one `loading` has started) and warm the text side;
        `lexicon`: the user's words and their phonemes (data, not settings)."""
        from kokoro_onnx.tokenizer import Tokenizer

        self._settings = settings or EngineSettings()
        self.threads = self.settings.effective_threads
        self._lexicon = lexicon or {}
        started = time.monotonic()
        check_file(assets.voices)
        if loading is None:
            loading = ModelLoading(
                assets,
                self.threads,
                self.settings.optimized_copy,
                find_cut=self.settings.decode == "windows",
            )
        # Meanwhile the text side takes its first-use costs (espeak, misaki, the
        # normalizer's tables): on two cores the two overlap almost fully.
        self._warm_text(Tokenizer().phonemize)
        self._kokoro = loading.result()
        self._cut: CutModel | None = loading.cut_model
        if self._cut is not None and self.settings.decode != "windows":
            _LOGGER.warning("Only the model's cut is installed: first calls decode in windows")
        # Kept beside the cut for the next worker: what the voices' whole calls taught
        # about the statistics windows need, and what a frame costs to decode here.
        self._priors: VoicePriors | None = None
        self._pace: Path | None = None
        if self._cut is not None and loading.cut_dir is not None:
            self._priors = VoicePriors(
                loading.cut_dir / "priors",
                self._cut.kinds,
                lambda voice: self.style(self.voice(voice)),
            )
            self._pace = loading.cut_dir / f"pace-{self.threads}-threads.json"
            self._cut.clock.recall(self._pace)
        self._model = KokoroModel(self._kokoro, self._cut is not None)
        # What stops this model's running call from another thread.
        self._switch = self._model.switch if self._cut is None else self._cut.switch
        self._stops = Stops(self._switch, self._cut.window_switch if self._cut else None)
        self._audio = CutAudio(self._cut, self._stops) if self._cut is not None else None
        self.voice_names = self._model.voice_names
        self._planner = Planner(
            self.settings, self._kokoro.tokenizer, self._lexicon, self._cut is not None
        )
        _LOGGER.info(
            "Model loaded in %.2f s (%d threads, %d voices, %s)",
            time.monotonic() - started,
            self.threads,
            len(self.voice_names),
            "first calls in windows" if self._cut else "whole calls",
        )

    def _warm_text(self, espeak: Callable[[str, str], str]) -> None:
        # phonemizer warns on every sentence about word counts nobody needs to match;
        # its logger is configured when it is imported, so quiet it after that.
        logging.getLogger("phonemizer").setLevel(logging.ERROR)
        text = "At 7:30 the door opened."
        if self.settings.normalize:
            text = normalize(text, "en-us")
        Phonemizer(espeak, lexicon=self._lexicon)(text, "en-us")

    @property
    def settings(self) -> EngineSettings:
        """How this engine decodes and plans (threads, calls, windows, normalizing)."""
        return self._settings

    @settings.setter
    def settings(self, settings: EngineSettings) -> None:
        """Plan and decode with other settings from now on (a test's, a benchmark's)."""
        self._settings = settings
        self._planner.settings = settings

    def voice(self, spec: str) -> VoiceSpec:
        """Parse a voice or blend spec against the loaded voices (VoiceError if unknown)."""
        return parse_voice(spec, self.voice_names)

    def style(self, spec: VoiceSpec) -> np.ndarray:
        """The voice's (or blend's) style vectors, one row per token count."""
        return self._model.style(spec)

    def phonemes(self, text: str, lang: str) -> str:
        """Normalized text → phonemes (what the model will say)."""
        return self._planner.phonemes(text, lang)

    def plan(
        self,
        piece: str,
        voice: VoiceSpec,
        speed: float = 1.0,
        lang: str | None = None,
        awaited: bool = False,
        in_hand: float | None = None,
        words: bool = False,
        sentence_pause: int = SENTENCE_PAUSE_MS,
        normalization: Normalization | None = None,
    ) -> list[Call]:
        """The model calls that speak one piece of text, in order (see `Planner.plan`)."""
        return self._planner.plan(
            piece, voice, speed, lang, awaited, in_hand, words, sentence_pause, normalization
        )

    def shorten(self, call: Call, limit: int) -> list[Call]:
        """`call` as calls of at most `limit` phonemes, cut between words."""
        return self._planner.shorten(call, limit)

    def run(self, call: Call, tag: object = None) -> np.ndarray:
        """One model call: int16 audio ending with the pause its punctuation calls for.

        `interrupt(tag)` from another thread stops it: `Interrupted` is raised.
        """
        if self._cut is not None:
            return np.concatenate(
                [pcm for pcm, _ in self.stream(replace(call, windowed=False), tag)]
            )
        return self._model.run(call, tag)

    def inputs(self, call: Call) -> dict[str, np.ndarray]:
        """The model's inputs for a call, as kokoro-onnx's create() builds them."""
        return self._model.inputs(call)

    def timed(
        self, call: Call, tag: object = None, shared: bool = False
    ) -> Iterator[tuple[np.ndarray, bool, list[WordTime]]]:
        """`stream`, and the call's words (see `plan`) timed from the start of its
        audio: with its first audio, but for the last word, which comes with its
        last (where the audio ends shows where that word does)."""
        clock = CallClock(call)
        for pcm, last in self.stream(call, tag, shared, clock):
            yield pcm, last, clock.heard(len(pcm), last)

    def stream(
        self, call: Call, tag: object = None, shared: bool = False, clock: CallClock | None = None
    ) -> Iterator[tuple[np.ndarray, bool]]:
        """One model call as int16 arrays, each with whether it is the last: window by
        window if `call.windowed` (or if decoded at once it would come after its
        listener's `call.in_hand` has played), else at once; the last ends with the
        pause its punctuation calls for.

        Between windows, `yield_to_others(tag)` tells whether another client should
        have the model now (`shared`: others wait for turns, so windows stay short).
        `interrupt(tag)` stops the plan (`Interrupted`); it and `let_others_go(tag)`
        stop a window after the first (any window of a call cut only for memory, see
        `max_decode_seconds`): an empty array comes instead, and the window is decoded
        again when the iteration goes on. `clock` learns the token durations and
        where the trimmed audio begins (word times, `timed`).
        """
        if self._audio is None:
            yield self.run(call, tag), True
            return
        try:
            limit = self.settings.max_decode_seconds
            plan, way = self._audio.plan(call, self.inputs(call), self._priors, limit, tag, clock)
            if way.whole:
                yield self._audio.whole(call, plan, self._priors, tag, clock), True
                return
        except Interrupted:
            self._stops.done(tag)
            raise
        _LOGGER.debug(
            "Windows%s with %s",
            f" of at most {way.longest} frames" if way.longest else "",
            "the voice's statistics" if way.prior else "probe rows",
        )
        yield from self._audio.windows(call, plan, way, tag, shared, clock)

    def yield_to_others(self, tag: object) -> bool:
        """Whether a stop for `tag` came: its call should pause after this window."""
        return self._stops.spent(tag)

    def let_others_go(self, tag: object) -> None:
        """Have the call tagged `tag` pause at once if it is decoding a window after its
        first (that window is decoded again later), else after its window in progress
        (from another thread); unlike `interrupt`, a plan or a whole call goes on."""
        self._stops.let_others_go(tag)

    def interrupt(self, tag: object) -> bool:
        """Stop the running call tagged `tag` (from another thread); False if nothing
        of it was running. A call decoded in windows stops its window after the first,
        or pauses at its next window (see `stream`)."""
        return self._stops.interrupt(tag)

    def speak(
        self,
        piece: str,
        voice: VoiceSpec,
        speed: float = 1.0,
        lang: str | None = None,
        awaited: bool = False,
        sentence_pause: int = SENTENCE_PAUSE_MS,
    ) -> Iterator[np.ndarray]:
        """Yield int16 audio for one piece of text, one array per model call.

        Arrays can be played back to back; see `plan` for `awaited`.
        """
        for call in self.plan(piece, voice, speed, lang, awaited, sentence_pause=sentence_pause):
            yield self.run(call)

    @property
    def priors(self) -> VoicePriors | None:
        """What the voices' whole calls taught the windows (None without the cut model)."""
        return self._priors

    @priors.setter
    def priors(self, priors: VoicePriors | None) -> None:
        """Learn into, and estimate from, another store (a test's or a benchmark's)."""
        self._priors = priors

    @property
    def pace(self) -> Path | None:
        """Where what a frame costs to decode here is kept (None without the cut model)."""
        return self._pace

    @pace.setter
    def pace(self, path: Path | None) -> None:
        """Keep what a frame costs in another file (a test's)."""
        self._pace = path

    @property
    def cut(self) -> CutModel | None:
        """The cut model that decodes in windows (None: calls are decoded whole)."""
        return self._cut

    @property
    def kokoro(self) -> Any:
        """The kokoro-onnx object underneath (its `create()` is the benchmarks' baseline)."""
        return self._kokoro

    def calls_learned(self, voice: str) -> int:
        """How many whole calls in `voice` taught the statistics its windows use."""
        return self._priors.calls(str(self.voice(voice))) if self._priors is not None else 0

    def lengths_learned(self, voice: str) -> list[int]:
        """The lengths, in frames, of the calls in `voice` its windows are predicted from."""
        return self._priors.lengths(str(self.voice(voice))) if self._priors is not None else []

    def keep_learned(self) -> None:
        """Save what the voices' calls taught since the last save, and what a frame
        costs here, before exiting."""
        if self._priors is not None:
            self._priors.flush()
        if self._cut is not None and self._pace is not None:
            self._cut.clock.remember(self._pace)

    def warm_up(self) -> None:
        """The first call is slower (allocations, kernels); pay it before a user waits."""
        started = time.monotonic()
        voice = self.voice(self.voice_names[0])
        for _ in self.speak("Ready.", voice, lang="en-us"):
            pass
        _LOGGER.debug("Warm-up took %.2f s", time.monotonic() - started)
