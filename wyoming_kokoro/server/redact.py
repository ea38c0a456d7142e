"""What a client may be told of a failure: both doors word it through here.

A failure's text can name the server's files (a model that cannot load, a voices
file gone), Python's own wording (an exception's name, `sys.set_int_max_str_digits`)
or echo a client's input at any length (a number of thousands of digits). The log
keeps the whole text; a client gets each file's name only, plain words, and a
bounded text.
"""

from __future__ import annotations

import codecs
import json
import re

# An absolute path (not the tail of a URL or of a relative one, nor one of the HTTP
# door's own routes, which error texts name), spaces and all when a later word goes
# on with a slash
_PATH = re.compile(
    r"(?<![\w.~:/-])/(?!v1/audio/\w+\b|dev/captioned_speech\b)"
    r"[^\s'\":,]+(?: [^\s'\":,/]+/[^\s'\":,]*)*"
)

# The longest text a client is shown, and the longest word in it (a longer one, a
# number of thousands of digits or a blob of input, is cut to its head)
MAX_CLIENT_TEXT = 300
MAX_WORD = 40
_WORD_HEAD = 32
_CUT = "…"

# Python's wording of failures a client's input can cause, in plain words
_PLAIN = (
    (
        re.compile(
            r"Exceeds the limit \(\d+ digits\) for integer string conversion[^;]*"
            r"(?:;\s*use sys\.set_int_max_str_digits\(\) to increase the limit)?"
        ),
        "a number has too many digits",
    ),
    (re.compile(r"maximum recursion depth exceeded[\w ]*"), "nested too deeply"),
    (re.compile(r"invalid literal for int\(\) with base \d+"), "not a number"),
)
# Wording only a bug of ours makes: the client is told no more than that
_BUG = re.compile(
    r"NoneType|object has no attribute|object is not (?:subscriptable|callable|iterable)"
    r"|unsupported operand|positional argument|keyword argument|unhashable type"
)
_INTERNALS = (
    re.compile(r"Traceback \(most recent call last\).*", re.DOTALL),
    re.compile(r'File "[^"]*", line \d+(?:, in \S+)?'),
    re.compile(r"\b(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)\b:?"),
    re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>|\b0x[0-9a-fA-F]{6,}\b"),
    re.compile(r"__\w+__"),
    re.compile(r"\bsys\.\w*(?:\(\))?"),
)
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD + 1},}}")
_BLANK = "a failure inside the server"


def json_failure(err: Exception) -> str:
    """Why bytes are not JSON, in plain words and counting from 1 (Python's own
    wording names codecs and counts characters from 0)."""
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 (byte {err.start + 1})"
    if isinstance(err, json.JSONDecodeError):
        return f"not valid JSON (line {err.lineno}, column {err.colno})"
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return for_client(str(err)) if str(err) else "not valid JSON"


def loads_json(raw: bytes) -> object:
    """`raw` as JSON, a UTF-8 byte order mark before it allowed (some clients write
    one); the errors as `json_failure` words them."""
    return json.loads(raw.removeprefix(codecs.BOM_UTF8).decode("utf-8"))


def without_paths(text: str) -> str:
    """`text` with each file-system path cut to its file name: a client is told
    what failed, not where the server keeps its files (the log keeps those)."""
    return _PATH.sub(lambda m: m.group().rstrip("/").rsplit("/", 1)[-1] or "/", text)


def for_client(text: str) -> str:
    """A failure's `text` as a client may see it: file names without their paths,
    plain words for Python's, no word longer than `MAX_WORD` characters and at most
    `MAX_CLIENT_TEXT` in all."""
    if _BUG.search(text):
        return _BLANK
    text = without_paths(text)
    for pattern, plain in _PLAIN:
        text = pattern.sub(plain, text)
    for _ in range(3):  # what one cut joins, the next pass sees
        before = text
        for pattern in _INTERNALS:
            text = pattern.sub("", text)
        if text == before:
            break
    text = _LONG_WORD.sub(lambda m: m.group()[:_WORD_HEAD] + _CUT, text)
    text = text.strip(" \t\r\n:;,")
    if len(text) > MAX_CLIENT_TEXT:
        text = text[: MAX_CLIENT_TEXT - len(_CUT)].rstrip() + _CUT
    return text or _BLANK
