"""Errors that sqlml reports to its users.

Every error a user can cause is a :class:`SqlmlError`: it carries a one-paragraph message,
where it happened (line and column in the program) and a hint on what to do. Anything else
that escapes is a bug in sqlml. A :class:`SqlmlWarning` is said the same way, but of a
program that runs.

Every diagnostic is said ``file:line:column: error|warning|note: message``: a warning said
while a program is analysed or run (:func:`warn`) names the file that :func:`diagnosing`
set for the context (``<input>`` without one), as errors name the source they are rendered
for.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# How a statement's summary starts when it is a warning (a failed ASSERT ... WARN's), then
# ``line L: message``: the step succeeded, and the front end says where (summary_warning).
WARNING_SUMMARY = "warning: "
_SUMMARY_LINE = re.compile(r"line \d+: ")

# The program file the diagnostics said in this context are about (``<-e>``, a path...).
_SOURCE: ContextVar[str | None] = ContextVar("sqlml_source", default=None)


class SqlmlError(Exception):
    """A mistake in the user's program, data or settings, reported without a traceback."""

    severity = "error"  # the word after the location: error, warning or note (see below)
    # Whether its column points at the mistake itself (the shell then draws a caret under
    # it), not merely at the start of its statement.
    pinpointed = False

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint

    def at(self, line: int, column: int) -> SqlmlError:
        """Attach a location unless the error already has one; returns self."""
        if self.line is None:
            self.line, self.column = line, column
        return self

    def pinpoint(self, text: str, line: int, column: int, offset: int) -> SqlmlError:
        """Place the error ``offset`` characters into ``text``, which starts at ``line`` and
        ``column`` of the program: at the mistake itself. Returns self."""
        before = text[:offset]
        lines = before.count("\n")
        self.line = line + lines
        self.column = column + offset if not lines else offset - before.rfind("\n")
        self.pinpointed = True
        return self

    def render(self, source: str | None = None) -> str:
        """Format as ``source:line:column: error: message`` (``warning:`` for a
        :class:`SqlmlWarning`, ``note:`` for a :class:`NotRun`) plus the hint, if any."""
        where = source or "<input>"
        if self.line is not None:
            where += f":{self.line}:{self.column}"
        text = f"{where}: {self.severity}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class SqlmlWarning(SqlmlError):
    """Not a mistake that stops the program, but likely not what its author meant (a feature
    that gives the label away): reported, never raised."""

    severity = "warning"


class ParseError(SqlmlError):
    """The program's text does not follow sqlml's grammar."""

    pinpointed = True


class CheckError(SqlmlError):
    """The program parses but is not meaningful (unknown estimator, bad attribute...)."""

    pinpointed = True


class DatasourceError(SqlmlError):
    """The database could not be reached or refused a statement. ``offset``: where in the
    statement's SQL the database says it went wrong (0-based; None: it does not say);
    ``unplaced``: the message without the database's own drawing of that place, for where
    sqlml draws it (None: the message has none)."""

    offset: int | None = None
    unplaced: str | None = None


class DatasourceBusy(DatasourceError):
    """The database could not run a statement now: another session holds what it needs."""


class ModelError(SqlmlError):
    """A model is missing, unreadable, or does not fit the data it is given. ``model``: the
    name of the model it is about, which its statement's text names (None: not told)."""

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, line=line, column=column, hint=hint)
        self.model = model


class KubernetesError(SqlmlError):
    """A workflow or job for Kubernetes cannot be built as asked (settings, missing extra)."""


class NotRun(SqlmlError):
    """A statement that did not run (a statement it waits for failed, the run was cancelled,
    an earlier file failed): not a mistake of its own, so it is reported as a ``note``."""

    severity = "note"


_A_BUG = "this is a bug in sqlml, not a mistake in the program"
_SAID_AT_MOST = 2000  # of an error's first line, the one said (all of it: the traceback)


class InternalError(SqlmlError):
    """Not the user's mistake: an exception sqlml did not foresee (a bug in sqlml, or in a
    library it calls). It is reported as every error is, one paragraph at the statement it
    stopped; its traceback, :attr:`details`, goes to the step's log instead of the screen."""

    details = ""

    @classmethod
    def of(cls, error: BaseException, where: str) -> InternalError:
        """``error``, met in ``where`` (``step s1-select``, ``sqlml check``...)."""
        import traceback  # here: only a bug loads it

        first = next(iter(str(error).strip().splitlines()), "")[:_SAID_AT_MOST]
        internal = cls(
            f"internal error in {where}: {type(error).__name__}: {first}",
            hint=f"{_A_BUG}: please report it, with what you ran",
        )
        internal.details = "".join(traceback.format_exception(error))
        return internal

    def kept_in(self, path: object) -> InternalError:
        """Say in the hint that the traceback is kept in the file ``path``; returns self."""
        self.hint = f"{_A_BUG}: please report it, with the traceback kept in {path}"
        return self


@contextmanager
def diagnosing(source: str | None) -> Iterator[None]:
    """In the body, :func:`warn` names ``source`` (a program's file, or ``<-e>``)."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def warn(message: str, line: int, column: int, hint: str | None = None) -> None:
    """Say on standard error ``file:line:column: warning: message`` (and the hint) about the
    program :func:`diagnosing` names."""
    warning = SqlmlWarning(message, line=line, column=column, hint=hint)
    print(warning.render(_SOURCE.get()), file=sys.stderr, flush=True)


def summary_warning(summary: str | None, line: int, column: int) -> SqlmlWarning | None:
    """The warning a statement's ``summary`` says, located at the statement (``line``,
    ``column``); None if the summary is no warning."""
    if not summary or not summary.startswith(WARNING_SUMMARY):
        return None
    message = summary[len(WARNING_SUMMARY) :]
    found = _SUMMARY_LINE.match(message)
    return SqlmlWarning(message[found.end() :] if found else message, line=line, column=column)
