"""The fenced code blocks of a Markdown page, and the output they show, compared exactly.

A page's ```` ```text ```` block shows what the commands before it print, standard output
and standard error as a terminal shows them (one stream, in the order printed). It must
equal that output line for line, as doctest and sqllogictest compare, but for what differs
from one run to the next, which it writes as placeholders:

- ``<run-id>``: a run's id (it holds the time the run started);
- ``<cache>``: sqlml's cache folder (``~/.cache/sqlml``, whose ``runs/`` holds the run logs);
- ``<folder>``: the folder the commands run in (the root of the reader's checkout);
- ``<time>``: a date and time, such as a model's ``trained_at``;
- a line ``...``: lines left out (any number of them).

Spaces at the ends of lines are not compared (Markdown does not keep them). Numbers are
compared as any other text: a command whose output is not the same at every run (a
training's metrics, rows without ORDER BY, progress bars) is made deterministic instead
(seeds, ORDER BY; progress is drawn on terminals only).

Regenerating: ``SQLML_REGENERATE_DOCS=1`` makes the tests that compare output blocks write
each block that differs as the commands' output with its placeholders, instead of failing
(a block that matches, ``...`` and all, is left as it is). Review the difference (``git
diff``), shorten long outputs with ``...`` where the page needs no more, and run again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")
LEFT_OUT = "..."
REGENERATE = os.environ.get("SQLML_REGENERATE_DOCS") == "1"
_RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page."""

    doc: Path
    line: int  # of the opening fence
    lang: str
    tag: str  # the rest of the info string, such as a file name
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}"


def blocks_of(doc: Path) -> list[Block]:
    """The fenced blocks of ``doc``, in order."""
    found: list[Block] = []
    start = None
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        fence = FENCE.match(line)
        if fence and start is None:
            start, lang, tag, body = number, fence.group(1), fence.group(2).strip(), []
        elif line.startswith("```") and start is not None:
            found.append(Block(doc, start, lang, tag, "".join(f"{line}\n" for line in body)))
            start = None
        elif start is not None:
            body.append(line)
    assert start is None, f"{doc.name}:{start}: a code block is never closed"
    return found


def placeheld(output: str, places: Mapping[str, str]) -> str:
    """``output`` with what varies between runs as its placeholder (see the module doc):
    ``places`` maps texts (the test's folders, its database's name) to what the page shows
    instead, ``<folder>`` or the reader's database."""
    for text in sorted(places, key=len, reverse=True):
        output = output.replace(text, places[text])
    return _TIME.sub("<time>", _RUN_ID.sub("<run-id>", output))


def matches(expected: str, output: str) -> bool:
    """Whether ``output`` (with its placeholders) is the ``expected`` block, lines ``...``
    standing for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == LEFT_OUT else re.escape(line) + "\n"
        for line in _lines(expected)
    )
    return re.fullmatch(pattern, "".join(line + "\n" for line in _lines(output))) is not None


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").split("\n")] if text.strip() else []


class Rewrites:
    """Output blocks to write anew (when regenerating), each page's written once at the end."""

    def __init__(self) -> None:
        self._texts: dict[Block, str] = {}

    def add(self, block: Block, text: str) -> None:
        self._texts[block] = "".join(f"{line}\n" for line in _lines(text))

    def write(self) -> None:
        """Replace each block's lines in its page, the last blocks first."""
        for doc in {block.doc for block in self._texts}:
            lines = doc.read_text().split("\n")
            for block in sorted((b for b in self._texts if b.doc == doc), key=lambda b: -b.line):
                new = self._texts[block].splitlines()
                lines[block.line : block.line + block.text.count("\n")] = new
            doc.write_text("\n".join(lines))
        self._texts.clear()
