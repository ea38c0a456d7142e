"""The fenced code blocks of README.md and docs/*.md, and what the tests do with each.

Every block is run by its kind unless a comment just before it says otherwise:
`<!-- example: not run: REASON -->` (a container, the add-on, a download) or
`<!-- example: file NAME -->` (the block is the content of a data dir's file, read by
the product's own reader). A new example is therefore run by default; a skip is a
visible choice with its reason.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARK = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
# Programs a shell example may call and the test knows how to run here.
SHELL_PROGRAMS = frozenset({"kokoro-say", "curl", "wyoming-kokoro", "echo"})
# The files a data dir may hold that an example can show, by name.
DATA_FILES = frozenset({"presets.yaml", "lexicon.txt"})
RUN_KINDS = frozenset({"sh", "python", "json", "xml"})


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text and its mark."""

    doc: str  # README.md, docs/voices.md
    line: int  # of the opening fence
    lang: str
    text: str
    mark: str  # the example comment's text, "" without one

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        return (
            self.mark.removeprefix("not run:").strip() if self.mark.startswith("not run") else None
        )

    @property
    def data_file(self) -> str | None:
        return self.mark.removeprefix("file").strip() if self.mark.startswith("file ") else None

    def commands(self) -> list[str]:
        """A shell block's commands: continued lines joined, comments and blanks left out."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        return [line for line in joined.splitlines() if shlex.split(line, comments=True)]


def blocks(docs: tuple[Path, ...] = DOCS, root: Path = ROOT) -> list[Block]:
    found = []
    for path in docs:
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            opening = _FENCE.match(lines[index])
            if not opening:
                index += 1
                continue
            indent, lang = opening.groups()
            end = index + 1
            while not lines[end].strip().startswith("```"):
                end += 1
            body = "\n".join(line.removeprefix(indent) for line in lines[index + 1 : end])
            previous = next((x for x in reversed(lines[:index]) if x.strip()), "")
            mark = _MARK.match(previous)
            found.append(
                Block(
                    str(path.relative_to(root)),
                    index + 1,
                    lang,
                    body + "\n",
                    mark.group(1) if mark else "",
                )
            )
            index = end + 1
    return found


def programs(command: str) -> list[str]:
    """The programs a shell command line calls, each stage of a pipeline."""
    stages = command.split("|")
    return [shlex.split(stage, comments=True)[0] for stage in stages if stage.strip()]


def why_not_runnable(block: Block) -> str | None:
    """None when the test can run or read the block as it is; else what is missing."""
    if block.skip_reason is not None:
        return None if block.skip_reason else "a 'not run' mark needs its reason"
    if block.data_file is not None:
        return None if block.data_file in DATA_FILES else f"no reader for {block.data_file}"
    if block.mark:
        return f"unknown example mark {block.mark!r}"
    if block.lang not in RUN_KINDS:
        return f"a {block.lang or 'plain'} block is not run by its kind"
    if block.lang == "sh":
        for command in block.commands():
            unknown = [p for p in programs(command) if p not in SHELL_PROGRAMS]
            if unknown:
                return f"{unknown[0]} is not a program the examples test runs"
    return None
