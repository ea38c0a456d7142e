"""The worker's message loop: loads the model, speaks one model call at a time, ends on EOF.

The process starts in `__main__.py` (or is forked from the waiting parent of
`--prefork`, `zygote.py`). It reads its
configuration as the first message on stdin (a command line would cap its size:
a large lexicon did not fit), then talks the messages of `protocol.py` over
stdin/stdout (the only thing written to stdout); logs go to stderr. The parent
closes stdin when the worker has been idle long enough, and the process exits,
so the OS gets all of its memory back.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, BinaryIO

from wyoming_kokoro.audio import SAMPLE_RATE
from wyoming_kokoro.protocol import (
    Audio,
    BadMessage,
    Drop,
    Failed,
    Fatal,
    Message,
    Next,
    Piece,
    Preempt,
    Ready,
    Setup,
    Stop,
    WorkerConfig,
    decode,
)
from wyoming_kokoro.synthesis.loudness import for_voices_file
from wyoming_kokoro.synthesis.stopping import Interrupted
from wyoming_kokoro.synthesis.voicing import Voiced, Voicing
from wyoming_kokoro.text.normalizing import Normalization
from wyoming_kokoro.worker.crash_hook import crash_for_tests, crash_marker
from wyoming_kokoro.worker.going_on import ENDED, replay, unheard

if TYPE_CHECKING:
    import numpy as np

    from wyoming_kokoro.synthesis.calls import Call
    from wyoming_kokoro.timeline import WordTime

    # A call part-way through its windows: the rest of its blocks.
    Windows = Iterator[tuple[np.ndarray, bool, list[WordTime]]]

_LOGGER = logging.getLogger("wyoming_kokoro.worker")


class _Worker:
    """The engine and the pieces it is part-way through."""

    def __init__(self, voiced: Voiced, stdout: BinaryIO) -> None:
        from wyoming.event import write_event

        self._write = write_event
        self._voiced = voiced
        self._engine = voiced.engine
        self._stdout = stdout
        # What each piece still has to say: calls, or a call part-way through its windows.
        self._plans: dict[int, deque[Call | Windows]] = {}
        self._voicings: dict[int, Voicing] = {}
        # Where each piece is, for a new worker to go on from should this one die
        # (protocol.Audio.steps, .heard): its calls cut short and ended, and the bytes
        # of its call in progress already sent.
        self._steps: dict[int, list[int]] = {}
        self._heard: dict[int, int] = {}
        self._crash_marker = crash_marker()

    def send(self, message: Message) -> None:
        self._write(message.event(), self._stdout)
        self._stdout.flush()

    def handle(self, message: Message) -> None:
        if isinstance(message, Drop):
            self._forget(message.id)
            return
        if not isinstance(message, (Piece, Next)):
            return
        job_id = message.id
        try:
            if isinstance(message, Piece):
                if self._crash_marker is not None and self._crash_marker in message.text:
                    crash_for_tests()
                voicing = self._voiced.voicing(message.voice, message.speed, message.volume)
                self._voicings[job_id] = voicing
                plan = self._engine.plan(
                    message.text,
                    voicing.voice,
                    voicing.speed,
                    message.lang,
                    awaited=message.awaited,
                    in_hand=message.in_hand,
                    words=message.words,
                    sentence_pause=message.sentence_pause,
                    normalization=Normalization(message.normalize, tuple(message.normalize_off)),
                )
                calls: deque[Call | Windows] = deque(plan)
                replay(calls, message.steps, self._engine.shorten)  # after a worker died
                self._plans[job_id] = calls
                self._steps[job_id] = list(message.steps)
                self._heard[job_id] = message.heard
            if isinstance(message, Next):
                reply: Message = self._speak_next(
                    job_id, message.limit, message.windows, message.in_hand
                )
            else:
                reply = self._speak_next(job_id, None, message.windows)
        except Exception as err:
            # One bad piece (a voice of the wrong shape in a user's file raises
            # IndexError, or onnxruntime's own exception types) must not end the
            # burst for everyone else. Writing the reply is outside: a broken pipe
            # still ends the worker.
            expected = isinstance(err, (ValueError, KeyError))  # VoiceError is a ValueError
            _LOGGER.warning(
                "Piece %s failed: %s%s", job_id, "" if expected else f"{type(err).__name__}: ", err
            )
            _LOGGER.debug("Piece %s failed", job_id, exc_info=True)
            self._forget(job_id)
            reply = Failed(job_id, str(err) or type(err).__name__)
        self.send(reply)

    def _forget(self, job_id: int) -> None:
        self._plans.pop(job_id, None)
        self._voicings.pop(job_id, None)
        self._steps.pop(job_id, None)
        self._heard.pop(job_id, None)

    def _speak_next(
        self, job_id: int, limit: int | None = None, at_most: int = 0, in_hand: float | None = None
    ) -> Audio:
        """The next call of a piece, or its next windows: at most `at_most` of them
        if more than 0 (others wait for their first audio). A call not begun yet is
        decoded in windows if, decoded at once, it would come after `in_hand` seconds
        (the audio its listener has yet to hear)."""
        calls = self._plans.get(job_id)
        if calls is None:
            raise KeyError(f"no piece {job_id} in progress")
        first = calls[0] if calls else None
        if first is not None and not isinstance(first, Iterator):
            calls.popleft()
            if limit and not first.windowed:
                parts = self._engine.shorten(first, limit)
                first, rest = parts[0], parts[1:]
                calls.extendleft(reversed(rest))
                if rest:
                    self._steps[job_id].append(limit)
            calls.appendleft(first if in_hand is None else replace(first, in_hand=in_hand))
        pcm, said = b"", []
        if calls:
            head = calls.popleft()
            windows = (
                head
                if isinstance(head, Iterator)
                else unheard(
                    _from_each_block(self._engine.timed(head, job_id, shared=at_most > 0)),
                    self._heard[job_id],
                )
            )
            count = 0  # windows heard this turn (a stopped one is not)
            try:
                for audio, last, words in windows:
                    said = [word.to_list() for word in words]
                    if last:  # the call's last audio goes with its answer, as for whole calls
                        pcm = self._leveled(job_id, audio)
                        self._steps[job_id].append(ENDED)
                        self._heard[job_id] = 0
                        break
                    if len(audio):  # else a window was stopped: it comes again later
                        count += 1
                        window = self._leveled(job_id, audio)
                        self._heard[job_id] += len(window)
                        steps, heard = list(self._steps[job_id]), self._heard[job_id]
                        self.send(Audio(job_id, True, window, True, said, steps, heard))
                        said = []
                    if self._engine.yield_to_others(job_id) or count == at_most:
                        # Someone else needs the model now: the rest of this call
                        # follows, from the next window, at this piece's next turn.
                        # Told with the call, a worker need not wait for a Preempt
                        # that comes only after it has begun another window.
                        _LOGGER.debug("Piece %s lets others go after window %d", job_id, count)
                        calls.appendleft(windows)
                        break
            except Interrupted:
                # Stopped before any audio: this call is spoken again later.
                calls.appendleft(head)
                _LOGGER.debug("Call of piece %s interrupted", job_id)
        steps, heard = list(self._steps[job_id]), self._heard[job_id]
        if not calls:
            self._forget(job_id)
        return Audio(job_id, more=bool(calls), pcm=pcm, words=said, steps=steps, heard=heard)

    def _leveled(self, job_id: int, audio: np.ndarray) -> bytes:
        return self._voiced.level(self._voicings[job_id], audio).tobytes()


def read_setup(stdin: BinaryIO) -> Setup | None:
    """The first message, read without the wyoming library (the model load should not
    wait for its import): a JSON header line, then its JSON data."""
    line = stdin.readline()
    if not line:
        return None
    header = json.loads(line)
    data = dict(header.get("data") or {})
    if header.get("data_length"):
        data.update(json.loads(stdin.read(header["data_length"])))
    if header.get("payload_length"):
        stdin.read(header["payload_length"])
    return Setup(**data) if header.get("type") == Setup.type else None


def run_loop(stdin: BinaryIO, stdout: BinaryIO, setup: Setup | None = None) -> int:
    """Read the set-up (unless given), load the engine, answer messages until Stop or EOF."""
    if setup is None:
        try:
            setup = read_setup(stdin)
        except (ValueError, TypeError) as err:  # not JSON, or not a Setup's fields
            _LOGGER.error("Bad setup message: %s", err)
            return 2
    if not isinstance(setup, Setup):
        _LOGGER.error("Expected a setup message, got %s", setup)
        return 2
    config = WorkerConfig.from_dict(setup.config)
    if config.debug:
        logging.getLogger().setLevel(logging.DEBUG)

    from wyoming_kokoro.synthesis.loading import ModelLoading

    # The model loads while the rest is imported: the engine pulls in numpy,
    # kokoro-onnx, espeak and the normalizer, which the load does not need. Until
    # the loader has imported onnxruntime and begun the session, other imports would
    # only compete with it for the GIL and delay the first audio.
    settings = config.engine
    loading = ModelLoading(
        config.assets, settings.effective_threads, find_cut=settings.decode == "windows"
    )
    loading.building.wait(timeout=10)
    from wyoming.event import read_event, write_event

    from wyoming_kokoro.catalog.files import AssetError
    from wyoming_kokoro.synthesis.engine import Engine

    worker: _Worker | None = None
    try:
        engine = Engine(config.assets, settings, loading, config.lexicon)
        if setup.warm_up:
            engine.warm_up()
        leveler = for_voices_file(config.assets.voices) if config.level else None
        worker = _Worker(Voiced(engine, leveler), stdout)
    except (AssetError, OSError, ValueError) as err:
        write_event(Fatal(str(err)).event(), stdout)
        stdout.flush()
        return 1
    worker.send(Ready(os.getpid(), list(engine.voice_names)))
    # Messages are read on a thread, so a Preempt can stop the call that runs now.
    messages: queue.Queue[Message | None] = queue.Queue()

    def read() -> None:
        while (event := read_event(stdin)) is not None:
            try:
                message = decode(event)
            except BadMessage as err:
                _LOGGER.error("%s", err)
                continue
            if isinstance(message, Preempt) and message.soft:
                engine.let_others_go(message.id)
            elif isinstance(message, Preempt):
                engine.interrupt(message.id)
            else:
                messages.put(message)
        messages.put(None)

    threading.Thread(target=read, name="worker messages", daemon=True).start()
    while (message := messages.get()) is not None and not isinstance(message, Stop):
        worker.handle(message)
    engine.keep_learned()  # the next burst's worker starts from what this one learned
    return 0


def _from_each_block(
    timed: Iterator[tuple[np.ndarray, bool, list[WordTime]]],
) -> Iterator[tuple[np.ndarray, bool, list[WordTime]]]:
    """The engine times a call's words from the call's first sample; each Audio's words
    are timed from its own (protocol.Audio.words): a call's later windows are shifted
    back by the audio sent before them (a word begun earlier starts before its block)."""
    sent = 0
    for pcm, last, words in timed:
        yield pcm, last, [word.shifted(-sent / SAMPLE_RATE) for word in words]
        sent += len(pcm)
