"""Speaking a long document's parts, in kokoro-say's own process or in each of its
speaking processes (parallel.py): the model loaded once, each part spoken and kept
in the work dir the moment it is finished."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_kokoro.audio import SAMPLE_RATE, silence
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.timeline import Timeline

from .plan import Part, Pause
from .resume import WorkDir

if TYPE_CHECKING:
    from wyoming_kokoro.synthesis.voicing import Voiced, Voicing


@dataclass(frozen=True)
class Setup:
    """What a speaking process needs (sent whole to a new process)."""

    assets: Assets
    engine: EngineSettings
    lexicon: dict[str, str]
    timed: bool
    work: Path
    shown: str  # the output as the user named it


class Speaker:
    """The model, loaded, and the work dir its parts go to."""

    def __init__(self, setup: Setup, threads: int | None = None) -> None:
        from wyoming_kokoro.synthesis.engine import Engine  # heavy: numpy, onnxruntime
        from wyoming_kokoro.synthesis.loudness import for_voices_file
        from wyoming_kokoro.synthesis.voicing import Voiced

        engine = setup.engine if threads is None else replace(setup.engine, threads=threads)
        self._voiced: Voiced = Voiced(
            Engine(setup.assets, engine, lexicon=setup.lexicon),
            for_voices_file(setup.assets.voices),
        )
        self._timed = setup.timed
        # Only the process that took the work dir's lock clears it; the others add parts.
        self._work = WorkDir(setup.work, setup.shown)
        self._voicings: dict[tuple[str, float, float, int], Voicing] = {}

    def speak(self, part: Part, key: str) -> None:
        """Speak `part` and keep it under `key`."""
        import numpy as np

        timeline = Timeline()
        audio: list[np.ndarray] = []
        samples = 0
        for step in part.steps:
            if isinstance(step, Pause):
                gap = silence(step.ms / 1000)
                audio.append(gap)
                samples += len(gap)
                continue
            voicing = self._voicing(step.voice, step.speed, step.volume, step.sentence_pause)
            if self._timed:
                for pcm, words in self._voiced.timed(step.text, voicing, step.lang):
                    timeline.add(words, samples / SAMPLE_RATE)
                    audio.append(pcm)
                    samples += len(pcm)
            else:
                for pcm in self._voiced.speak(step.text, voicing, step.lang):
                    audio.append(pcm)
                    samples += len(pcm)
        timeline.close()
        joined = np.concatenate(audio) if audio else np.zeros(0, dtype=np.int16)
        self._work.save(key, joined, timeline.words)

    def _voicing(self, voice: str, speed: float, volume: float, pause: int) -> Voicing:
        wanted = (voice, speed, volume, pause)
        if wanted not in self._voicings:
            self._voicings[wanted] = self._voiced.voicing(voice, speed, volume, pause)
        return self._voicings[wanted]
