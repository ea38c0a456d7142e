"""Decoding one model call window by window, on the graph cut by `graph.py`.

The plan (text → features, harmonic source, durations) runs once per call, so the
prosody comes from the whole sentence. The generator then runs on windows: the
first is small, so the first audio comes early. Every window is decoded with one
set of statistics (and quantization scales) fed, an estimate of the whole call's:
the windows join without a step in timbre or loudness, since with fixed statistics
a window with `context` frames on each side decodes as the same frames decoded
whole (exactly with a little more context than the default's). What differs from the
whole call is only that estimate, for the whole call at once. It is the voice's
learned average (`prior.py`) when the caller has one; else the shortest first
window is decoded in one batch with `probes` rows as long as it, each made of
`snippets` short pieces spread over the rest of the call, and their statistics,
pooled, are the estimate: the same rows however long the clock makes the first
window, so the same call sounds the same on a busy CPU and an idle one.

How long the windows are is `pacing.py`'s: later ones as long as can be decoded
before the audio in hand has played, up to `longest` frames. A newcomer does not
wait for one to end: it is stopped, and decoded again later in windows of at most
`later` frames, as all are while others wait for turns.

The leading pad token's frames (about 15, 0.4 s that the whole call trims away as
silence) are not decoded in windows, but for the last few.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from wyoming_kokoro.synthesis.graph import (
    DURATIONS,
    FEATURES,
    FED,
    GENERATOR,
    PLAN,
    SAMPLES_PER_FRAME,
    SOURCE,
    SOURCE_TAIL,
    SPECTRUM,
    STYLE_HALF,
    TAIL,
    fed_input,
)
from wyoming_kokoro.synthesis.held_calls import Traits
from wyoming_kokoro.synthesis.pacing import (
    LEAD_FRAMES,
    MARGIN,
    Clock,
    Windows,
    first_size,
    schedule,
)
from wyoming_kokoro.synthesis.stopping import Interrupted, StopSwitch

_LEAK = 0.1  # the slope of the leaky ReLU before the generator's first upsampling


class CutModel:
    """The three parts of the model as onnxruntime sessions."""

    def __init__(self, sessions: dict[str, Any], windows: Windows | None = None) -> None:
        self.windows = windows or Windows()
        self.plan_session = sessions[PLAN]
        self._generator = sessions[GENERATOR]
        self._tail = sessions[TAIL]
        self._used = [o.name for o in self._generator.get_outputs()][1:]
        self._unfed = {
            value.name: np.zeros(
                [1, 1, 1] if len(value.shape) == 3 else [],
                np.uint8 if "uint8" in value.type else np.float32,
            )
            for value in self._generator.get_inputs()
            if value.name.endswith("/fed")
        }
        # What the generator's runs cost here, for sizing windows.
        self.clock = Clock()
        # Stops the plan or a whole decode.
        self.switch = StopSwitch()
        # Stops a window after the first, when another listener needs the model now:
        # it is decoded again when the call goes on, so windows can be long (less
        # context decoded twice) without a newcomer waiting for one to end.
        self.window_switch = StopSwitch()
        # Each part's arena keeps its high-water mark, and there are three: handed
        # back after every run, a worker falls back to near what it loaded between
        # calls (bench/RESULTS.md, M), at no cost measurable here.
        self._runs = _shrinking(self.switch.options, self.window_switch.options)

    def _stoppable(self, session: Any, names: Any, feed: dict[str, Any], tag: object) -> Any:
        with self.switch.running(tag) as options:
            return session.run(names, feed, options)

    def plan(self, inputs: dict[str, np.ndarray], tag: object = None) -> dict[str, np.ndarray]:
        """Features, harmonic source (a signal), durations and style half for one call."""
        names = [FEATURES, SOURCE, DURATIONS, STYLE_HALF]
        outputs = self._stoppable(self.plan_session, names, inputs, tag)
        return dict(zip(names, outputs, strict=True))

    # -- the generator ---------------------------------------------------------

    def _slice(self, plan: dict[str, np.ndarray], start: int, end: int) -> tuple[Any, Any]:
        features = plan[FEATURES][:, :, 2 * start : 2 * end]
        source = plan[SOURCE][:, SAMPLES_PER_FRAME * start : SAMPLES_PER_FRAME * end + SOURCE_TAIL]
        return features, source

    def _audio(self, spectrum: np.ndarray, start: int, core: tuple[int, int]) -> np.ndarray:
        audio = np.asarray(self._tail.run(None, {SPECTRUM: spectrum}, self._runs)[0]).ravel()
        return audio[SAMPLES_PER_FRAME * (core[0] - start) : SAMPLES_PER_FRAME * (core[1] - start)]

    def _row(self, plan: dict[str, np.ndarray], spans: list[tuple[int, int]]) -> tuple[Any, Any]:
        """Spans of frames one after another, as one generator input."""
        parts = [self._slice(plan, a, b) for a, b in spans]
        features = np.concatenate([f for f, _ in parts], axis=2)
        # Each slice of the source carries the samples its last frame's STFT reads
        # past its end; one row keeps the last slice's.
        tail = parts[-1][1][:, -SOURCE_TAIL:]
        source = np.concatenate([s[:, :-SOURCE_TAIL] for _, s in parts] + [tail], 1)
        return features, source

    def _pooled(
        self, plan: dict[str, np.ndarray], batch: list[list[tuple[int, int]]], tag: object = None
    ) -> list[Any]:
        """The generator on rows of equal length as one batch, statistics pooled over
        all (stoppable by `interrupt(tag)` when a tag is given)."""
        parts = [self._row(plan, spans) for spans in batch]
        feed = {
            FEATURES: np.concatenate([f for f, _ in parts]),
            SOURCE: np.concatenate([s for _, s in parts]),
            STYLE_HALF: plan[STYLE_HALF],
            FED: np.array(False),
            **self._unfed,
        }
        if tag is not None:
            return self._stoppable(self._generator, None, feed, tag)
        return self._generator.run(None, feed, self._runs)

    def frames(self, plan: dict[str, np.ndarray]) -> int:
        return int(plan[FEATURES].shape[2] // 2)

    def traits(self, plan: dict[str, np.ndarray]) -> Traits:
        """What the plan shows of the call's statistics: its length, and its features
        as the generator's first layer takes them (leaky ReLU), averaged over time."""
        features = plan[FEATURES][0]
        activated = np.where(features > 0, features, _LEAK * features)
        return Traits(self.frames(plan), activated.mean(axis=1, dtype=np.float64))

    def whole(self, plan: dict[str, np.ndarray], tag: object = None) -> np.ndarray:
        """The call decoded at once: the single graph's audio, bit for bit."""
        return self.decode(plan, tag)[0]

    def decode(
        self, plan: dict[str, np.ndarray], tag: object = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The call decoded at once, and the statistics it was decoded with."""
        frames = self.frames(plan)
        began = time.monotonic()
        outputs = self._pooled(plan, [[(0, frames)]], tag)
        audio = self._audio(outputs[0], 0, (0, frames))
        self.clock.timed(frames, time.monotonic() - began, window=False)
        return audio, self._fed(outputs)

    @property
    def kinds(self) -> dict[str, np.dtype]:
        """The generator's fed values and their types."""
        return {name: value.dtype for name, value in self._unfed.items()}

    def first_frame(self, plan: dict[str, np.ndarray]) -> int:
        # The leading pad token's frames, less a few: the first sound's onset can begin
        # inside them (the caller trims the silence before it, as the whole call does).
        return max(0, int(plan[DURATIONS].ravel()[0]) - LEAD_FRAMES)

    def fits_one_window(self, plan: dict[str, np.ndarray], estimated: bool) -> bool:
        """A call this short is decoded whole: windows would not bring its audio sooner.

        With the statistics `estimated` (no probe rows), a window costs its frames and
        context only, and the leading pad is not decoded: any call longer than a first
        window speaks sooner in windows ("Hi.": about 29 frames before the first audio
        instead of 46). Probe rows double the first window's cost: then only a call
        longer than a first and a later window gains."""
        w, after_pad = self.windows, self.frames(plan) - self.first_frame(plan)
        return after_pad <= (w.first if estimated else w.first + w.later)

    def late(self, plan: dict[str, np.ndarray], in_hand: float | None) -> bool:
        """Whether the call, decoded at once, would come after `in_hand` seconds of
        audio have played (at the cost a frame had here lately; unknown: not late)."""
        per_frame = self.clock.per_frame()
        if in_hand is None or per_frame is None:
            return False
        return self.frames(plan) * per_frame > MARGIN * in_hand

    def statistics(self, plan: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The whole call's own statistics (what windows would need to be exact)."""
        return self.decode(plan)[1]

    def _fed(self, outputs: list[Any]) -> dict[str, np.ndarray]:
        fed = {
            fed_input(name): np.asarray(v) for name, v in zip(self._used, outputs[1:], strict=True)
        }
        return {name: v.reshape(()) if not self._unfed[name].ndim else v for name, v in fed.items()}

    def _probes(self, frames: int, a0: int, b0: int) -> list[list[tuple[int, int]]]:
        """Rows as long as the first window, each of `snippets` pieces spread evenly
        over the frames after it (the last piece takes what the division leaves)."""
        w, size = self.windows, b0 - a0
        count = w.probes * w.snippets
        lengths = [size // w.snippets] * (w.snippets - 1)
        lengths.append(size - sum(lengths))
        centres = np.linspace(b0, frames, count + 2)[1:-1]
        rows = []
        for row in range(w.probes):
            spans = []
            for piece, length in enumerate(lengths):
                centre = centres[piece * w.probes + row]  # rows interleave over the call
                a = int(min(max(0.0, centre - length / 2), frames - length))
                spans.append((a, a + length))
            rows.append(spans)
        return rows

    def windowed(
        self,
        plan: dict[str, np.ndarray],
        statistics: dict[str, np.ndarray] | None = None,
        tag: object = None,
        shared: bool = False,
        longest: int = 0,
        waited: bool = True,
    ) -> Iterator[tuple[np.ndarray | None, bool]]:
        """The call's audio from the end of its leading pad, window by window, each with
        whether it is the last. Every window is decoded with `statistics` if given
        (no probe rows), else with those of the first window and its probe rows.
        No window is longer than `longest` frames if given (for memory); if nobody
        `waited` for the first (and `statistics` are given), the call is cut in even
        windows of at most that many.

        A window after the first that `window_switch.interrupt(tag)` stops yields
        None instead of audio (the caller should let others go now), and is decoded
        again when the iteration goes on, in windows of at most `later` frames (its
        listener's audio ran down meanwhile). So are all later windows if `shared`
        (others wait for turns)."""
        w = self.windows
        frames = self.frames(plan)
        start = self.first_frame(plan)
        bound = min(w.later, longest or w.later) if shared else longest  # 0: none
        if longest and statistics is not None and not waited:
            yield from self._later(plan, statistics, deque(_pieces([(start, frames)], bound)), tag)
            return
        # The schedule is sized with the cost the first window was sized with: else
        # the first window's own time could ask for a second it has no audio for.
        per_frame = self.clock.per_frame()
        end = min(frames, start + min(first_size(w, per_frame), longest or frames))
        a0, b0 = max(0, start - w.lead_context), min(frames, end + w.context)
        began = time.monotonic()
        if statistics is None:
            # The probe rows are as long as the shortest first window whatever the
            # clock says: the statistics, and so the sound, must not follow the CPU's
            # load. A longer first window is decoded again with them.
            p1 = min(frames, start + min(w.first, longest or frames) + w.context)
            batch = [[(a0, p1)], *self._probes(frames, a0, p1)]
            outputs = self._pooled(plan, batch)
            statistics = self._fed(outputs)
            spectrum = outputs[0][:1]
            if p1 != b0:
                batch.append([(a0, b0)])
                spectrum = self.fed_run(plan, statistics, a0, b0)
        else:
            batch = [[(a0, b0)]]
            spectrum = self.fed_run(plan, statistics, a0, b0)
        audio = self._audio(spectrum, a0, (start, end))
        self.clock.timed(len(batch) * (b0 - a0), time.monotonic() - began, window=len(batch) == 1)
        yield audio, end >= frames
        spans = deque(schedule(w, per_frame or self.clock.per_frame(), frames, start, end))
        if bound:
            spans = deque(_pieces(spans, bound))
        yield from self._later(plan, statistics, spans, tag)

    def _later(
        self,
        plan: dict[str, np.ndarray],
        statistics: dict[str, np.ndarray],
        spans: deque[tuple[int, int]],
        tag: object,
    ) -> Iterator[tuple[np.ndarray | None, bool]]:
        """The windows `spans`, each stoppable (see `windowed`)."""
        w, frames = self.windows, self.frames(plan)
        while spans:
            a, b = spans.popleft()
            a0, b0 = max(0, a - w.context), min(frames, b + w.context)
            began = time.monotonic()
            try:
                spectrum = self.fed_run(plan, statistics, a0, b0, tag)
            except Interrupted:
                spans.extendleft(reversed(list(_pieces([(a, b)], w.later))))
                spectrum = None
            if spectrum is None:
                yield None, False
                continue
            audio = self._audio(spectrum, a0, (a, b))
            self.clock.timed(b0 - a0, time.monotonic() - began)
            yield audio, b >= frames

    def fed_run(
        self,
        plan: dict[str, np.ndarray],
        statistics: dict[str, np.ndarray],
        a0: int,
        b0: int,
        tag: object = None,
    ) -> Any:
        """One generator run: the spectrum of frames `a0` to `b0` decoded with `statistics`."""
        features, source = self._slice(plan, a0, b0)
        feed = {FEATURES: features, SOURCE: source, STYLE_HALF: plan[STYLE_HALF]}
        fed = {**feed, FED: np.array(True), **statistics}
        if tag is None:
            return self._generator.run([SPECTRUM], fed, self._runs)[0]
        with self.window_switch.running(tag) as options:
            return self._generator.run([SPECTRUM], fed, options)[0]


def _pieces(spans: Iterable[tuple[int, int]], longest: int) -> Iterator[tuple[int, int]]:
    """`spans` cut into windows of at most `longest` frames, of even lengths (no crumb
    of a window that would decode mostly context)."""
    for a, b in spans:
        count = -(-(b - a) // longest)
        edges = [a + (b - a) * i // count for i in range(count + 1)]
        yield from itertools.pairwise(edges)


def _shrinking(*options: Any) -> Any:
    """Run options (new, and `options` changed alike) that hand the arena's unused
    memory back to the system when a run ends."""
    import onnxruntime as ort

    made = ort.RunOptions()
    for each in (made, *options):
        each.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return made
