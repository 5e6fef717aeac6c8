"""Run one IR statement against a datasource: the work behind every step."""

from __future__ import annotations

import re
from typing import IO

from sqlml import ir
from sqlml.datasources import Datasource
from sqlml.errors import InternalError, ModelError, SqlmlError
from sqlml.runtime.cancel import Token
from sqlml.runtime.context import Context, RunStep
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import Progress, Sink
from sqlml.statements import kind_of, resolve


def execute(
    statement: ir.Statement,
    datasource: Datasource,
    *,
    token: Token | None = None,
    sink: Sink | None = None,
    log: IO[str] | None = None,
    run: RunStep | None = None,
) -> Outcome:
    """Run ``statement`` with the handler its kind declares, given its :class:`Context`:
    ``datasource``, ``token`` (cancelling it stops the statement at its next check; None:
    nothing stops it) and a progress reporter of its own showing on ``sink`` (None:
    nowhere), its stages named for the model or table the statement writes; output of its
    own goes to ``log`` as well as to standard error (None: standard error only); ``run``:
    the recorded run it is a step of (None: none). Every
    error comes out as a :class:`SqlmlError` with its location: any other exception, a bug,
    as an :class:`InternalError` holding its traceback."""
    subject = kind_of(statement).effects.target(statement)
    context = Context(datasource, token or Token(), Progress(sink, subject), log, run or RunStep())
    try:
        return resolve(kind_of(statement).handler)(statement, context)
    except SqlmlError as error:
        raise _at_model(error, statement).at(statement.line, statement.column) from None
    except MemoryError:
        raise SqlmlError(
            f"step {statement.id} ran out of memory",
            line=statement.line,
            column=statement.column,
            hint="read fewer rows or columns at a time: TO TRAIN streams its rows WITH "
            "train.external_memory = true, TO PREDICT in batches of predict.batch_size",
        ) from None
    except Exception as error:  # not the user's mistake
        internal = InternalError.of(error, f"step {statement.id}")
        raise internal.at(statement.line, statement.column) from error


def _at_model(error: SqlmlError, statement: ir.Statement) -> SqlmlError:
    """A :class:`ModelError` without a place at the last place the statement names its model
    (after USING, MODEL...); returns it."""
    if not isinstance(error, ModelError) or error.model is None or error.line is not None:
        return error
    names = list(re.finditer(_word(error.model), statement.text, re.IGNORECASE))
    if names:
        error.pinpoint(statement.text, statement.line, statement.column, names[-1].start())
    return error


def _word(name: str) -> str:
    """A pattern of ``name`` as a whole name (not part of a longer one, nor quoted text)."""
    return rf"(?<![\w$'.]){re.escape(name)}(?![\w$'])"
