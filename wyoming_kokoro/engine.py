"""The synthesis core: onnxruntime session + voices → PCM, one piece at a time.

Used unchanged by the server's worker process and by `kokoro-say`. Importing
this module is cheap; the model is loaded when an `Engine` is built.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .assets import AssetError, Assets, check_file, model_file
from .audio import pause_after, silence, to_pcm16
from .g2p import Phonemizer
from .normalize import normalize
from .settings import CALL_TOKENS_RANGE, DEFAULT_CALL_TOKENS, default_threads
from .voices import VoiceSpec, g2p_language, parse_voice

_LOGGER = logging.getLogger(__name__)

# A first call longer than this is cut at its first clause (see split_first_clause).
QUICK_START_TOKENS = 120
_FIRST_CLAUSE = re.compile(r"[,;:!?.—…]\s")


@dataclass
class EngineOptions:
    """How the model runs and what text processing applies."""

    threads: int = field(default_factory=default_threads)
    normalize: bool = True
    lexicon: dict[str, str] = field(default_factory=dict)
    prefer_misaki: bool = True
    max_call_tokens: int = DEFAULT_CALL_TOKENS

    def __post_init__(self) -> None:
        low, high = CALL_TOKENS_RANGE
        if not low <= self.max_call_tokens <= high:
            raise ValueError(f"max call tokens must be {low}-{high}, got {self.max_call_tokens}")


def split_first_clause(phonemes: str) -> list[str]:
    """Cut a long batch after its first clause, if that clause is long enough.

    Model time grows with the batch, so the first audio comes sooner from a short
    first call; under ~30 tokens the voice sounds rushed, so shorter clauses stay.
    """
    if len(phonemes) <= QUICK_START_TOKENS:
        return [phonemes]
    match = _FIRST_CLAUSE.search(phonemes, 30, QUICK_START_TOKENS)
    if not match:
        return [phonemes]
    return [phonemes[: match.end()].strip(), phonemes[match.end() :].strip()]


class Engine:
    """A loaded Kokoro model with its voices."""

    def __init__(self, assets: Assets, options: EngineOptions | None = None) -> None:
        import onnxruntime as ort  # heavy: only where the model runs
        from kokoro_onnx import Kokoro

        self.options = options or EngineOptions()
        started = time.monotonic()
        check_file(assets.voices)
        session_options = ort.SessionOptions()
        session_options.intra_op_num_threads = self.options.threads
        session_options.inter_op_num_threads = 1
        # Input shapes change with every sentence: memory patterns only grow RSS.
        session_options.enable_mem_pattern = False
        with model_file(assets) as model:
            try:
                session = ort.InferenceSession(
                    model, sess_options=session_options, providers=["CPUExecutionProvider"]
                )
                self._kokoro = Kokoro.from_session(session, str(assets.voices))
            except Exception as err:  # onnxruntime raises its own exception types
                raise AssetError(f"cannot load the model {model}: {err}") from err
        # phonemizer warns on every sentence about word counts nobody needs to match;
        # its logger is configured when it is imported, so quiet it after that.
        logging.getLogger("phonemizer").setLevel(logging.ERROR)
        self.voice_names: tuple[str, ...] = tuple(self._kokoro.get_voices())
        self._phonemize = Phonemizer(
            self._kokoro.tokenizer.phonemize,
            lexicon=self.options.lexicon,
            prefer_misaki=self.options.prefer_misaki,
        )
        self._styles: dict[VoiceSpec, np.ndarray] = {}
        _LOGGER.info(
            "Model loaded in %.2f s (%d threads, %d voices)",
            time.monotonic() - started,
            self.options.threads,
            len(self.voice_names),
        )

    def voice(self, spec: str) -> VoiceSpec:
        """Parse a voice or blend spec against the loaded voices (VoiceError if unknown)."""
        return parse_voice(spec, self.voice_names)

    def _style(self, spec: VoiceSpec) -> np.ndarray:
        style = self._styles.get(spec)
        if style is None:
            style = sum(
                self._kokoro.get_voice_style(name).astype(np.float32) * weight
                for name, weight in spec.parts
            )
            self._styles[spec] = style
        return style

    def phonemes(self, text: str, lang: str) -> str:
        """Normalized text → phonemes (what the model will say)."""
        if self.options.normalize:
            text = normalize(text, lang)
        return self._phonemize(text, lang)

    def speak(
        self,
        piece: str,
        voice: VoiceSpec,
        speed: float = 1.0,
        lang: str | None = None,
        quick_start: bool = False,
    ) -> Iterator[np.ndarray]:
        """Yield int16 audio for one piece of text, one array per model call.

        Each array ends with the pause its punctuation calls for, so arrays can
        be played back to back. `quick_start` (the first piece a listener waits
        for) speaks a long piece's first clause on its own, so audio starts sooner.
        """
        from kokoro_onnx.chunker import split_phonemes

        if not 0.5 <= speed <= 2.0:
            raise ValueError(f"speed must be between 0.5 and 2.0, got {speed}")
        lang = lang or g2p_language(voice, piece)
        phonemes = self.phonemes(piece, lang)
        style = self._style(voice)
        batches = split_phonemes(phonemes, self.options.max_call_tokens)
        if quick_start and batches:
            batches[:1] = split_first_clause(batches[0])
        for batch in batches:
            if not self._kokoro.tokenizer.tokenize(batch):
                continue  # nothing the model can say (symbols only)
            audio, _ = self._kokoro.create(
                batch,
                voice=style,
                speed=speed,
                is_phonemes=True,
                trim=True,
                sentence_pause=0.0,
                clause_pause=0.0,
            )
            pcm = to_pcm16(audio)
            pause = silence(pause_after(batch) / speed)
            yield np.concatenate([pcm, pause])

    def warm_up(self) -> None:
        """The first call is slower (allocations, kernels); pay it before a user waits."""
        started = time.monotonic()
        voice = self.voice(self.voice_names[0])
        for _ in self.speak("Ready.", voice, lang="en-us"):
            pass
        _LOGGER.debug("Warm-up took %.2f s", time.monotonic() - started)
