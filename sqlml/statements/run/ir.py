"""The IR of TO RUN."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement

PROGRAM_KINDS = ("function", "script", "image")


@dataclass(frozen=True)
class RunStatement(Statement):
    """Run ``program`` on the rows of ``select``; what it writes into ``tables``.

    ``program_kind`` tells what ``program`` is: a Python function
    (``package.module.function``), a script (a ``.py`` file, its path relative to the
    program file's folder) or an image (``registry/image:tag``, ``image`` below, with the
    ``entrypoint`` written after its tag, if any). ``command`` holds CMD's arguments,
    ``params`` the WITH values handed to the program, ``attributes`` sqlml's own
    (``run.timeout``, ``output.replace``).
    """

    kind: ClassVar[str] = "run"
    select: str
    program: str
    program_kind: str  # one of PROGRAM_KINDS
    command: list[str]
    params: dict[str, Any]
    tables: list[list[str]]
    attributes: dict[str, Any]
    image: str | None = None  # an image program's image: its step runs in it
    entrypoint: str | None = None
