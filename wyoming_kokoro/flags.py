"""One option of the command line: what it is (flag, type, range, default, help,
environment variable), how its value is checked, and how click is told about it.

The options themselves are the table in options.py. Importing this module does not
import click (the worker imports the table on the cold path); click is imported only
when a command builds its options.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Option:
    """One command-line option: the single place that says what it is."""

    flag: str  # "--speed"; the Python name and env var follow from it
    help: str
    kind: str = "str"  # str, int, float, path, choice or flag
    default: Any = None
    low: float | None = None  # inclusive range of an int or float
    high: float | None = None
    choices: tuple[str, ...] = ()
    multiple: bool = False
    metavar: str | None = None
    flag_value: str | None = None  # for an option whose value may be left out
    show_default: bool = True
    addon: str | None = None  # its name in addon/config.yaml, if the add-on offers it
    advanced: bool = False  # tuning or a limit: hidden from --help, shown by --help-all

    @property
    def name(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def envvar(self) -> str:
        return f"KOKORO_{self.name.upper()}"

    def check(self, value: float) -> None:
        """Raise ValueError if ``value`` is not finite or outside this option's range."""
        # NaN compares false with every bound, so it would pass the range check.
        if not math.isfinite(value):
            raise ValueError(f"{self.name} must be a finite number, got {value}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise ValueError(f"{self.name} must be {self.low}-{self.high}, got {value}")

    def click_type(self) -> Any:
        import click

        if self.kind == "int":
            low = None if self.low is None else int(self.low)
            high = None if self.high is None else int(self.high)
            return click.IntRange(low, high)
        if self.kind == "float":
            return _finite_float_range()(self.low, self.high)
        if self.kind == "path":
            return click.Path(path_type=Path)
        if self.kind == "choice":
            return click.Choice(self.choices)
        return None

    def decorator(self, short: str | None = None, hide_advanced: bool = False) -> Callable[[F], F]:
        import click

        names = [short, self.flag] if short else [self.flag]
        extra: dict[str, Any] = {}
        if self.kind == "flag":
            extra["is_flag"] = True
        elif self.flag_value is not None:
            extra.update(is_flag=False, flag_value=self.flag_value)
        else:
            extra["type"] = self.click_type()
        return click.option(
            *names,
            default=self.default,
            multiple=self.multiple,
            metavar=self.metavar,
            envvar=self.envvar,
            # 0 is a default worth showing; None, off and nothing are not.
            show_default=self.show_default
            and self.default not in (None, ())
            and self.default is not False,
            show_envvar=True,
            help=self.help,
            hidden=self.advanced and hide_advanced,
            **extra,
        )


@functools.cache
def _finite_float_range() -> type:
    """click.FloatRange that also refuses nan and ±inf (built lazily: click is imported
    only when a command builds its options)."""
    import click

    class FiniteFloatRange(click.FloatRange):
        def convert(self, value: Any, param: Any, ctx: Any) -> Any:
            number = click.FLOAT.convert(value, param, ctx)
            # NaN passes every range check; inf passes an open one.
            if not math.isfinite(number):
                self.fail(f"{value!r} is not a finite number.", param, ctx)
            return super().convert(number, param, ctx)

    return FiniteFloatRange


def apply(
    options: tuple[Option, ...],
    short: dict[str, str] | None = None,
    *,
    hide_advanced: bool = False,
) -> Callable[[F], F]:
    """Decorate a click command with ``options``, in order (``short``: extra short names;
    ``hide_advanced``: leave the advanced ones out of --help, see `help_all`)."""

    def decorate(command: F) -> F:
        for option in reversed(options):
            name = (short or {}).get(option.name)
            command = option.decorator(name, hide_advanced)(command)
        return command

    return decorate


def help_all() -> Callable[[F], F]:
    """A `--help-all` flag: the command's help with its hidden (advanced) options too."""
    import click

    def show(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        hidden = [param for param in ctx.command.params if getattr(param, "hidden", False)]
        for param in hidden:
            param.hidden = False  # type: ignore[attr-defined]
        try:
            click.echo(ctx.get_help(), color=ctx.color)
        finally:
            for param in hidden:
                param.hidden = True  # type: ignore[attr-defined]
        ctx.exit()

    return click.option(
        "--help-all",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=show,
        help="Show every option, tuning and limits included, and exit.",
    )
