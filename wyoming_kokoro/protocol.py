"""The messages between the scheduler and its worker process, as typed values.

They travel as Wyoming events (a JSON header line, JSON data, an optional PCM
payload) on the worker's stdin and stdout. The scheduler hands out the model one
call at a time, so a client that arrives while another is being served gets the
model at the next call rather than after a whole piece:

    scheduler → worker   Setup        once, first: the worker's configuration
                         Piece        plan a piece of text, then speak its first call
                                      (or, after a worker died, its next: from where
                                      its steps and heard bytes say)
                         Next         speak the next call of a piece (shorter if asked)
                                      (both: stop after N windows if asked, others
                                      wait for their first audio; both: the audio
                                      its listener has in hand, so a call that
                                      would come late is decoded in windows)
                         Drop         forget a piece (its client went away)
                         Preempt      abandon the running call of a piece (re-spoken later),
                                      or (soft) pause it after the window in progress
                                      (a later window is stopped, re-decoded later)
                         Stop         end the burst (also: EOF on stdin)
    worker → scheduler   Ready | Fatal              once, after Setup
                         Audio (PCM, more?) | Failed   one answer to every Piece and Next
                                      (an interrupted call: Audio without PCM, more=True)
                         Audio (window=True)  a window of a call decoded in windows, sent
                                      before that answer (which carries the last one)
                                      (Audio: the piece's words with their times, if
                                      its Piece asked for them)
    waiting parent →     Exited       a forked worker ended (see workerproc.py)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.settings import EngineSettings

if TYPE_CHECKING:  # the worker reads its Setup before it imports wyoming (cold start)
    from wyoming.event import Event


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to know; sent as its first message."""

    assets: Assets
    engine: EngineSettings = field(default_factory=EngineSettings)
    lexicon: dict[str, str] = field(default_factory=dict)
    debug: bool = False
    level: bool = True  # bring every voice to the same loudness (loudness.py)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        found = data["assets"]
        found.update(model=str(found["model"]), voices=str(found["voices"]))
        found["voice_names"] = list(found["voice_names"])
        return data

    @staticmethod
    def from_dict(data: dict[str, Any]) -> WorkerConfig:
        found = data["assets"]
        assets = Assets(
            Path(found["model"]),
            Path(found["voices"]),
            tuple(found["voice_names"]),
            found["source"],
            found["embedded_model"],
        )
        engine = EngineSettings(**data["engine"])
        return WorkerConfig(**{**data, "assets": assets, "engine": engine})


class Message:
    """A worker protocol message; `type` names its event."""

    type: ClassVar[str]

    def event(self) -> Event:
        from wyoming.event import Event

        data = asdict(self)  # type: ignore[call-overload]
        payload = data.pop("pcm", None)
        return Event(self.type, data, payload=payload or None)


@dataclass(frozen=True)
class Setup(Message):
    type: ClassVar[str] = "setup"
    config: dict[str, Any]
    warm_up: bool = False  # only when nobody waits (preload): it costs one synthesis


@dataclass(frozen=True)
class Ready(Message):
    type: ClassVar[str] = "ready"
    pid: int
    voices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fatal(Message):
    type: ClassVar[str] = "fatal"
    text: str


@dataclass(frozen=True)
class Piece(Message):
    type: ClassVar[str] = "piece"
    id: int
    text: str
    voice: str
    speed: float = 1.0
    lang: str | None = None
    awaited: bool = False  # a listener waits for this piece's first audio
    volume: float = 1.0  # a multiplier on the voice's equal loudness
    # Others wait for their first audio: let them go after this many windows (0: no).
    windows: int = 0
    # Seconds of audio its listener has yet to hear (a later piece): its first call
    # is decoded in windows too if a whole call of it would be decoded later.
    in_hand: float | None = None
    words: bool = False  # time its written words: its Audio carries them
    # Going on where a worker that died left the piece: the `Audio.steps` of its last
    # answer, and the bytes of its call in progress its listener has (not said again).
    steps: list[int] = field(default_factory=list)
    heard: int = 0
    sentence_pause: int = SENTENCE_PAUSE_MS  # milliseconds after a sentence, at speed 1.0
    # The request's normalization (text/normalizing.py): at all, and the switches off.
    normalize: bool = True
    normalize_off: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Next(Message):
    type: ClassVar[str] = "next"
    id: int
    limit: int | None = None  # others wait: say at most this many phonemes now
    windows: int = 0  # as `Piece.windows`
    # As `Piece.in_hand`, for the piece's next call: a long sentence is more than one
    # call, and its second can be late as well as its first.
    in_hand: float | None = None


@dataclass(frozen=True)
class Drop(Message):
    type: ClassVar[str] = "drop"
    id: int


@dataclass(frozen=True)
class Preempt(Message):
    type: ClassVar[str] = "preempt"
    id: int  # stop this piece's running call: someone else needs the model now
    # Only let others go: after the plan and first window of one listener's call
    # (never stopped, while another waits for theirs), or at once in a later window
    # (stopped, and decoded again when the call goes on).
    soft: bool = False


@dataclass(frozen=True)
class Stop(Message):
    type: ClassVar[str] = "stop"


@dataclass(frozen=True)
class Exited(Message):
    type: ClassVar[str] = "exited"
    pid: int
    code: int


@dataclass(frozen=True)
class Audio(Message):
    type: ClassVar[str] = "audio"
    id: int
    more: bool  # False: this was the piece's last call
    pcm: bytes = b""  # s16le, 24 kHz, mono; ends with the pause after the call
    window: bool = False  # a window of the call in progress: its answer is still to come
    # Written words said from this audio on (Piece.words), timed from its first sample:
    # timeline.WordTime.to_list() each.
    words: list[list[str | float | bool | None]] = field(default_factory=list)
    # Where its piece is now, for a new worker to go on from (`Piece.steps`): in order,
    # each call cut short (the phonemes it was cut to) and each call ended (-1) since
    # the piece was planned; and the bytes of its call in progress sent so far.
    steps: list[int] = field(default_factory=list)
    heard: int = 0


@dataclass(frozen=True)
class Failed(Message):
    type: ClassVar[str] = "failed"
    id: int
    text: str


_TYPES: dict[str, type[Message]] = {
    cls.type: cls
    for cls in (Setup, Ready, Fatal, Piece, Next, Drop, Preempt, Stop, Exited, Audio, Failed)
}


class BadMessage(ValueError):
    """An event that is not a well-formed worker protocol message."""


def decode(event: Event) -> Message:
    """The message an event carries (BadMessage if it carries none)."""
    cls = _TYPES.get(event.type)
    if cls is None:
        raise BadMessage(f"unknown worker message {event.type!r}")
    data = dict(event.data or {})
    if cls is Audio:
        data["pcm"] = event.payload or b""
    try:
        return cls(**data)
    except TypeError as err:
        raise BadMessage(f"malformed {event.type!r} message: {err}") from err
