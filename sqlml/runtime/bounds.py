"""How much of a message or a program's output sqlml keeps, stores or sends.

A message (an error, stored in the run record and ``states.jsonl``, shown by ``sqlml status``
and the runs page) holds at most :data:`MESSAGE_LIMIT` characters; a line of a TO RUN
program's output shown on the terminal or in its error at most :data:`LINE_LIMIT`; a step's
log keeps a program's output whole up to :data:`LOG_LIMIT` characters. What is cut says how
much was and where the rest is (:func:`clipped`).
"""

from __future__ import annotations

MESSAGE_LIMIT = 64 * 1024
LINE_LIMIT = 2 * 1024  # a line of a program's output, 20 of which end its error
LOG_LIMIT = 64 * 1024 * 1024  # the output of one program in a step's log
LOG_TAIL = 1024 * 1024  # the end of a step's log the runs page shows


def clipped(text: str, limit: int = MESSAGE_LIMIT, rest: str = "") -> str:
    """``text``, or its first ``limit`` characters and a note: how many more there were and,
    if ``rest`` says it, where they are."""
    if len(text) <= limit:
        return text
    return text[:limit] + cut_note(len(text) - limit, rest)


def cut_note(more: int, rest: str = "") -> str:
    """The note ending a text cut ``more`` characters short."""
    return f" … [{more} more characters{f'; {rest}' if rest else ''}]"
