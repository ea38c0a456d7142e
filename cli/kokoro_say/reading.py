"""The text to speak: the TEXT argument, a file or stdin, read as UTF-8 whatever the
bytes (UTF-16 where its byte-order mark says so). A byte that is not UTF-8 becomes
U+FFFD (which is not spoken) with one warning naming where it came from; the rest is
spoken."""

from __future__ import annotations

import codecs
import logging
import sys
from pathlib import Path

import click

_LOGGER = logging.getLogger("kokoro_say")


def read_text(text: str | None, file: str | None) -> str:
    """The text a run speaks (click's errors for a wrong combination or a bad file)."""
    if text is not None and file is not None:
        raise click.UsageError("give either TEXT or --file, not both")
    if file is not None:
        if file == "-":
            return decoded(sys.stdin.buffer.read(), "stdin")
        try:
            return decoded(Path(file).read_bytes(), file)
        except OSError as err:
            raise click.ClickException(f"cannot read {file}: {_reason(err)}") from err
    if text == "-" or (text is None and not sys.stdin.isatty()):
        return decoded(sys.stdin.buffer.read(), "stdin")
    if text is None:
        raise click.UsageError("no text: give TEXT, --file FILE, or pipe text on stdin")
    # Python hands bytes of the command line that are not UTF-8 on as lone surrogates,
    # which no encoder takes: they are read again as the bytes they were.
    return decoded(text.encode("utf-8", "surrogateescape"), "the text")


def decoded(data: bytes, where: str) -> str:
    """`data` as text; a leading byte-order mark dropped, bad bytes as U+FFFD."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # A UTF-16 mark names its encoding ("Unicode" in Windows' editors).
        return data.decode("utf-16", "replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        # Counted after the byte-order mark the codec took off: in the input's bytes.
        first = err.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)
    text = data.decode("utf-8-sig", "replace")
    bad = text.count("\ufffd") - data.decode("utf-8-sig", "ignore").count("\ufffd")
    _LOGGER.warning(
        "%s is not all UTF-8: %d byte sequence%s not read and not spoken (the first at byte %d)",
        where,
        bad,
        "" if bad == 1 else "s",
        first,
    )
    return text


def _reason(err: OSError) -> str:
    return (err.strerror or str(err)).lower()
