"""What a voice's calls have taught about the generator's statistics.

Windows need the statistics of the whole call before it is decoded (see
`decoder.py`). Probe rows estimate them at the cost of a second row beside the
first window. A voice's own earlier calls estimate them better and for nothing:
every call decoded whole yields its statistics anyway. So per voice the engine
keeps its latest calls and predicts a new call's statistics from them
(`held_calls.py`).

Kept beside the cut model, one file per voice (saved after each of the first calls,
then every few, and when the worker exits), so a worker that exits when idle does
not forget: the next burst's first call is the one a listener waits for.

A voice `teaching.py` has taught is frozen: its calls teach nothing more, so the same
request decodes with the same statistics every time. Each file names the style it was
learned with (a digest of the voice's, or blend's, style vectors): a voices file
that changes a voice makes its file stale, learned afresh. A voice asked for before
it is taught is written down as wanted (`wanted/`), for the teacher to take first.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_kokoro.synthesis.held_calls import HeldCalls, Traits
from wyoming_kokoro.synthesis.keeping import keep

_LOGGER = logging.getLogger(__name__)

# Shorter than any word with its pads (1 s): nothing a voice says.
MIN_FRAMES = 40
TRUSTED = 8  # calls learned before the prior replaces the probe rows
_SAVE_EVERY = 8  # once TRUSTED calls are held, saved every this many calls
_FORMAT = 4  # 4: the style's digest and the taught mark (a 3 is adopted as untaught)
WANTED = "wanted"  # the folder of voices asked for before they were taught


class VoicePriors:
    """Per voice, its latest calls' statistics, to predict a new call's."""

    def __init__(
        self,
        directory: Path | None,
        kinds: dict[str, np.dtype],
        style: Callable[[str], np.ndarray] | None = None,
    ) -> None:
        """`kinds`: the generator's fed values and their types (a file made for
        another graph is not used); `style`: a voice's style vectors, whose digest
        each file keeps (a file learned with another style is not used)."""
        self._directory = directory
        self._kinds = kinds
        self._names = tuple(kinds)
        self._style = style
        self._digests: dict[str, str] = {}
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._calls: dict[str, HeldCalls | None] = {}
        # Each file as last read or written here: another process (the teacher, or a
        # worker) may replace it meanwhile, and then it is read again.
        self._seen: dict[str, tuple[int, int, int] | None] = {}
        self._unsaved: set[str] = set()  # voices with calls learned since their last save
        self._wanted: set[str] = set()

    def _path(self, voice: str) -> Path | None:
        if self._directory is None:
            return None
        return self._directory / (re.sub(r"[^A-Za-z0-9_.+-]", "_", voice) + ".npz")

    def digest(self, voice: str) -> str:
        """What names the voice's style: its files are learned with this one."""
        if self._style is None:
            return ""
        if voice not in self._digests:
            style = np.ascontiguousarray(self._style(voice), np.float32)
            self._digests[voice] = hashlib.sha256(style.tobytes()).hexdigest()[:16]
        return self._digests[voice]

    def _stat(self, voice: str) -> tuple[int, int, int] | None:
        path = self._path(voice)
        try:
            info = path.stat() if path is not None else None
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino) if info is not None else None

    def _held(self, voice: str) -> HeldCalls | None:
        if voice in self._calls:
            stat = self._stat(voice)
            # Unchanged, or gone (a cache that cannot take files keeps them in memory).
            if stat is None or stat == self._seen.get(voice):
                return self._calls[voice]
        self._calls[voice] = None
        self._seen[voice] = self._stat(voice)
        path = self._path(voice)
        if path is None or self._seen[voice] is None:
            return None
        try:
            self._calls[voice] = self._load(voice, path)
        except (OSError, ValueError, KeyError, TypeError) as err:  # damaged: learn afresh
            _LOGGER.warning("Ignoring the statistics learned for %s (%s)", voice, err)
        return self._calls[voice]

    def _load(self, voice: str, path: Path) -> HeldCalls | None:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["format"])
            if version not in (_FORMAT - 1, _FORMAT):  # an upgrade: nothing is wrong
                _LOGGER.info("Learning the statistics for %s afresh (new format)", voice)
                return None
            if tuple(data["names"]) != self._names:
                raise ValueError("made for another model graph")
            # A file from before digests were kept is taken as the voice's own.
            digest = str(data["digest"]) if version == _FORMAT else self.digest(voice)
            if digest != self.digest(voice):
                _LOGGER.info("The style of %s changed: learning its statistics afresh", voice)
                return None
            calls = HeldCalls(data["frames"], data["summaries"], data["values"])
            calls.learned = int(data["learned"])
            calls.taught = version == _FORMAT and bool(data["taught"])
            shapes = [tuple(row[1 : 1 + row[0]]) for row in data["shapes"].tolist()]
            self._shapes.update(zip(self._names, shapes, strict=True))
            if not len(calls.frames) or calls.values.shape[0] != len(calls.frames):
                raise ValueError("no calls in it")
            return calls

    def calls(self, voice: str) -> int:
        """How many calls the voice has taught."""
        held = self._held(voice)
        return held.learned if held is not None else 0

    def lengths(self, voice: str) -> list[int]:
        """The lengths, in frames, of the calls held for the voice."""
        held = self._held(voice)
        return [int(f) for f in held.frames] if held is not None else []

    def taught(self, voice: str) -> bool:
        """Whether the voice was taught (its statistics no longer change)."""
        held = self._held(voice)
        return held is not None and held.taught

    def mark_taught(self, voice: str) -> None:
        """Freeze what the voice has learned: its windows are the same on every request."""
        held = self._held(voice)
        if held is None:
            return
        held.taught = True
        self._save(voice, held)
        self.forget_wanted(voice)

    def forget_wanted(self, voice: str) -> None:
        """The voice is no longer wanted (taught, or not to be spoken)."""
        if self._directory is not None:
            with contextlib.suppress(OSError):
                self._wanted_path(voice).unlink(missing_ok=True)

    def wanted(self) -> list[str]:
        """The voices asked for before they were taught, oldest first."""
        if self._directory is None:
            return []
        try:
            marks = sorted((self._directory / WANTED).glob("*.voice"), key=_mtime)
            return [mark.read_text().strip() for mark in marks]
        except OSError:
            return []

    def _wanted_path(self, voice: str) -> Path:
        assert self._directory is not None
        return self._directory / WANTED / (re.sub(r"[^A-Za-z0-9_.+-]", "_", voice) + ".voice")

    def _want(self, voice: str) -> None:
        """Note the voice for the teacher (once per process; a cache that cannot take
        the note only means the voice learns from its own whole calls)."""
        if self._directory is None or voice in self._wanted:
            return
        self._wanted.add(voice)
        keep(self._wanted_path(voice), voice.encode(), "a voice to teach", make_folder=True)

    def learn(self, voice: str, statistics: dict[str, np.ndarray], traits: Traits) -> None:
        """Add one whole call's statistics (unless the voice was taught: frozen)."""
        if traits.frames < MIN_FRAMES:
            return
        for name in self._names:
            self._shapes.setdefault(name, np.shape(statistics[name]))
        values = np.concatenate([np.ravel(statistics[name]) for name in self._names])
        held = self._held(voice)
        if held is not None and held.taught:
            return
        if held is None or held.summaries.shape[1] != len(traits.summary):
            summaries = np.zeros((0, len(traits.summary)), np.float32)
            empty = HeldCalls(
                np.zeros(0, np.int64), summaries, np.zeros((0, len(values)), np.float32)
            )
            held = self._calls[voice] = empty
        held.add(traits, values)
        self._unsaved.add(voice)
        if held.learned <= TRUSTED or held.learned % _SAVE_EVERY == 0:
            self._save(voice, held)

    def flush(self) -> None:
        """Save what was learned since the last save (a worker that exits does this)."""
        for voice in sorted(self._unsaved):
            held = self._calls.get(voice)
            if held is not None:
                self._save(voice, held)

    def estimate(self, voice: str, traits: Traits) -> dict[str, np.ndarray] | None:
        """The voice's statistics for a call with these traits; None until it has
        taught `TRUSTED` calls. A voice not yet taught is written down as wanted."""
        held = self._held(voice)
        if held is None or not held.taught:
            self._want(voice)
        if held is None or held.learned < TRUSTED or len(held.frames) < 2:
            return None
        if held.summaries.shape[1] != len(traits.summary):
            return None
        flat = held.predict(traits)
        estimate, at = {}, 0
        for name in self._names:
            shape = self._shapes[name]
            value = flat[at : at + int(np.prod(shape))].reshape(shape)
            at += value.size
            if self._kinds[name] == np.uint8:
                value = np.clip(np.round(value), 0, 255)
            estimate[name] = np.asarray(value).astype(self._kinds[name])
        return estimate

    def _save(self, voice: str, held: HeldCalls) -> None:
        self._unsaved.discard(voice)
        path = self._path(voice)
        if path is None:
            return
        if self._stat(voice) not in (None, self._seen.get(voice)):
            # Another process wrote it meanwhile (the teacher, most likely): its file
            # holds more than this one's latest calls, so it stays.
            return
        shapes = [self._shapes[name] for name in self._names]
        arrays: dict[str, Any] = {
            "format": np.array(_FORMAT),
            "names": np.array(self._names),
            # Each value's rank, then its dimensions (scalars and [1, C, 1] vectors).
            "shapes": np.array([[len(s), *s, *[0] * (3 - len(s))] for s in shapes], np.int64),
            "frames": held.frames,
            "summaries": held.summaries,
            "values": held.values,
            "learned": np.array(held.learned),
            "digest": np.array(self.digest(voice)),
            "taught": np.array(held.taught),
        }
        packed = io.BytesIO()
        np.savez(packed, **arrays)
        if keep(path, packed.getvalue(), f"the statistics learned for {voice}", make_folder=True):
            self._seen[voice] = self._stat(voice)


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
