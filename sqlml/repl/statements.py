"""Where statements end in the text typed at the shell's prompt."""

from __future__ import annotations

import re

from sqlml.grammar.recovery import statement_ends

# What may follow the last ";" of a complete entry: blanks and comments.
_BLANK = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)


def is_meta_command(text: str) -> bool:
    """Whether ``text`` is a backslash command such as ``\\d`` (one line, no ``;``)."""
    return text.lstrip().startswith("\\")


def is_complete(text: str) -> bool:
    """Whether Enter should run ``text``: it is empty, a backslash command, or its statements
    end with a top-level ``;`` followed by nothing but blanks and comments."""
    if not text.strip() or is_meta_command(text):
        return True
    ends, unclosed = statement_ends(text)
    return bool(ends) and not unclosed and _BLANK.fullmatch(text, ends[-1] + 1) is not None


def current_statement(text: str) -> str:
    """The statement being typed at the end of ``text``: what follows its last ``;``."""
    ends, _ = statement_ends(text)
    return text[ends[-1] + 1 :] if ends else text
