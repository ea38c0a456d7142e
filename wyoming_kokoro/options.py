"""Command-line options that `wyoming-kokoro` and `kokoro-say` share, defined once."""

from __future__ import annotations

import click

from .settings import CALL_TOKENS_RANGE, DEFAULT_CALL_TOKENS

max_call_tokens_option = click.option(
    "--max-call-tokens",
    type=click.IntRange(*CALL_TOKENS_RANGE),
    default=DEFAULT_CALL_TOKENS,
    show_default=True,
    envvar="KOKORO_MAX_CALL_TOKENS",  # kokoro-say has no env prefix; the server has both
    help="Longest model call; higher cuts long clauses less but needs more memory.",
)
