"""The worker process: loads the model, speaks one job at a time, exits on EOF.

Started by the scheduler as `python -m wyoming_kokoro.worker CONFIG_JSON [--warm-up]`. It talks
Wyoming-framed events over stdin/stdout (the only thing written to stdout); logs
go to stderr. The parent closes stdin when the worker has been idle long enough,
and the process exits, so the OS gets all of its memory back.

    parent → worker   job {id, text, voice, speed, lang, first}
    worker → parent   ready {voices} | fatal {text}
                      audio {id} + PCM payload (s16le, 24 kHz, mono), one per model call
                      done {id} | failed {id, text}
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO

from wyoming.event import Event, read_event, write_event

from .assets import Assets
from .settings import DEFAULT_CALL_TOKENS

_LOGGER = logging.getLogger("wyoming_kokoro.worker")


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to know; passed as JSON on its command line."""

    assets: Assets
    threads: int
    normalize: bool
    lexicon: dict[str, str]
    max_call_tokens: int = DEFAULT_CALL_TOKENS
    debug: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)  # Paths as strings

    @staticmethod
    def from_json(text: str) -> WorkerConfig:
        data = json.loads(text)
        found = data["assets"]
        data["assets"] = Assets(
            Path(found["model"]),
            Path(found["voices"]),
            tuple(found["voice_names"]),
            found["source"],
            found["embedded_model"],
        )
        return WorkerConfig(**data)


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """Keep fd 1 for the protocol only: anything a library prints goes to stderr."""
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, proto_out


def serve(config: WorkerConfig, stdin: BinaryIO, stdout: BinaryIO, warm_up: bool) -> int:
    """Load the engine, then answer jobs until stdin closes.

    Warm-up only pays off when nobody is waiting (preload): a request that started
    the worker would otherwise wait for an extra synthesis before its own.
    """
    from .assets import AssetError  # imported here: the engine pulls in numpy, onnxruntime
    from .engine import Engine, EngineOptions
    from .voices import VoiceError

    def send(event: Event) -> None:
        write_event(event, stdout)
        stdout.flush()

    try:
        engine = Engine(
            config.assets,
            EngineOptions(
                threads=config.threads,
                normalize=config.normalize,
                lexicon=config.lexicon,
                max_call_tokens=config.max_call_tokens,
            ),
        )
        if warm_up:
            engine.warm_up()
    except (AssetError, OSError, ValueError) as err:
        send(Event("fatal", {"text": str(err)}))
        return 1
    send(Event("ready", {"voices": list(engine.voice_names), "pid": os.getpid()}))

    while (event := read_event(stdin)) is not None:
        if event.type != "job":
            continue
        job_id = event.data.get("id")
        try:
            voice = engine.voice(event.data["voice"])
            for pcm in engine.speak(
                event.data["text"],
                voice,
                float(event.data.get("speed", 1.0)),
                event.data.get("lang"),
                quick_start=bool(event.data.get("first")),  # a listener waits for it
            ):
                send(Event("audio", {"id": job_id}, payload=pcm.tobytes()))
            send(Event("done", {"id": job_id}))
        except (VoiceError, ValueError, KeyError, RuntimeError) as err:
            # A bad piece of text must not end the burst for everyone else.
            _LOGGER.warning("Job %s failed: %s", job_id, err)
            send(Event("failed", {"id": job_id, "text": str(err)}))
    return 0


def main() -> None:
    config = WorkerConfig.from_json(sys.argv[1])
    logging.basicConfig(
        level=logging.DEBUG if config.debug else logging.INFO,
        format="%(asctime)s %(levelname)s worker[%(process)d] %(name)s: %(message)s",
        stream=sys.stderr,
    )
    stdin, stdout = _protocol_streams()
    try:
        code = serve(config, stdin, stdout, warm_up="--warm-up" in sys.argv[2:])
    except (BrokenPipeError, KeyboardInterrupt):
        code = 0  # the server went away: nothing left to do
    sys.exit(code)


if __name__ == "__main__":
    main()
