"""Formatting helpers for the markdown tables."""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)]) + "\n"


def num(value: float | None, digits: int = 2, unit: str = "") -> str:
    if value is None or value != value:  # None or NaN
        return "–"
    return f"{value:,.{digits}f}{unit}"


def mb(value: float | None) -> str:
    return num(value, 0, " MB")


def sec(value: float | None, digits: int = 2) -> str:
    return num(value, digits, " s")


def ratio(a: float | None, b: float | None, digits: int = 2) -> str:
    return num(a / b, digits, "×") if a and b else "–"


def goal(ok: bool, text: str) -> str:
    return f"{text} {'met' if ok else '**missed**'}"


def speech(seconds: float) -> str:
    return sec(seconds, 1) if seconds < 120 else num(seconds / 60, 1, " min")


def result(records: dict[str, Record], name: str) -> Record:
    return records.get(name, {}).get("result") or {}
