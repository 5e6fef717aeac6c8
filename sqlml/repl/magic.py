"""The Jupyter magic: ``%load_ext sqlml``, then ``%%sqlml`` cells and ``%sqlml`` lines.

    %%sqlml [--datasource URL] [RESULT_VAR]
    SELECT ... ;  SELECT ... TO TRAIN ... ;

A cell's statements run in order as one workflow on the local executor, in a worker thread:
interrupting the kernel cancels the run (training stops between rounds or batches, nothing
is committed) and the cell fails with one line. The last result (a pandas DataFrame) is the
cell's value and goes to ``RESULT_VAR`` when given; earlier results, summaries, plots
(``explain.plot``, ``evaluate.plot``) and the progress of reading, training and predicting
show as they come. ``:name`` binds the Python variable ``name``, ``{{name}}`` pastes the
table or column name it holds (:mod:`sqlml.repl.variables`). ``%sqlml --datasource URL``
alone connects and says to what; the datasource, once given, stays for the next cells
(default: ``$SQLML_DATASOURCE``, else a DuckDB file in the working folder). A user error
shows as sqlml's message alone, no traceback, its line counted as Jupyter counts the cell's
(the ``%%sqlml`` line is line 1).
"""

from __future__ import annotations

import copy
import html
import re
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import Image, display

from sqlml import ir
from sqlml.datasources import Datasource, ResultSet, connect, dialect_of, parse_url
from sqlml.errors import SqlmlError
from sqlml.local_files import internal_error
from sqlml.runtime import cancel, progress

if TYPE_CHECKING:
    from sqlml.backends.reports import StatementEnd

USAGE = "usage: %%sqlml [--datasource URL] [RESULT_VAR], or %sqlml [--datasource URL] SQL"
_DATASOURCE = re.compile(r"--datasource(?:=|\s+)(\S+)\s*")
PLOT_ATTRIBUTES = ("explain.plot", "evaluate.plot")
REFRESH_EVERY = 0.25  # seconds between two updates of a progress line


class SqlmlCellError(Exception):
    """A user error in a cell: IPython shows its message instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


@magics_class
class SqlmlMagics(Magics):
    """``%sqlml`` and ``%%sqlml``; remembers the datasource between cells."""

    datasource: str | None = None

    @no_var_expand  # {x} and $x stay as written: sqlml reads :x and {{x}} itself
    @line_cell_magic
    def sqlml(self, line: str, cell: str | None = None) -> Any:
        """Run sqlml statements: ``%%sqlml [--datasource URL] [RESULT_VAR]`` over a cell, or
        ``%sqlml [--datasource URL] STATEMENT`` on a line."""
        rest = line.strip()
        option = _DATASOURCE.match(rest)
        if option:
            connected = self._connect(option.group(1))
            rest = rest[option.end() :]
            if cell is None and not rest:
                print(connected)
                return None
        elif rest.startswith("--"):
            raise UsageError(f"unknown option {rest.split()[0]}; {USAGE}")
        if cell is None:
            return self._run(rest, None, first_line=1)
        if rest and not rest.isidentifier():
            raise UsageError(f"{rest!r} is no Python name to store the result in; {USAGE}")
        return self._run(cell, rest or None, first_line=2)  # the %%sqlml line is line 1

    def _connect(self, url: str) -> str:
        """Connect to ``url`` and make it the datasource (the previous one stays if that
        fails); the line that says to what."""
        try:
            datasource = connect(url, Path.cwd())
            try:
                version = server_version(datasource)
            finally:
                datasource.close()
        except SqlmlError as error:
            kept = parse_url(self.datasource) if self.datasource else "the default"
            raise SqlmlCellError(
                f"{error.render('--datasource')}\n  the datasource stays {kept}"
            ) from None
        self.datasource = url
        return f"connected to {datasource.url}" + (f" ({version})" if version else "")

    def _run(self, text: str, result_var: str | None, first_line: int) -> Any:
        """Run ``text``, which starts at line ``first_line`` of the cell."""
        from sqlml.backends import DEFAULT, backend
        from sqlml.repl.session import format_error
        from sqlml.repl.variables import bind

        try:
            dialect = dialect_of(self.datasource)
            statements = bind(text, self.shell.user_ns, dialect)
            if not statements:
                return None
            shown = _Shown(statements[-1].id, Path.cwd())
            interrupts: list[None] = []  # a kernel interrupt cancels the run
            with ThreadPoolExecutor(1, thread_name_prefix="sqlml-cell") as worker:
                result = backend(DEFAULT).run_statements(
                    statements,
                    "notebook",
                    worker,
                    url=self.datasource,
                    on_done=shown.done,
                    sink=_NotebookSink(),
                    on_cancel=lambda: interrupts.append(None),
                    interrupt="kernel interrupt",
                )
        except SqlmlError as error:
            raise SqlmlCellError(format_error(error, text, "cell", first_line).rstrip()) from None
        except Exception as error:  # a bug: one paragraph too, its traceback kept in a file
            raise SqlmlCellError(internal_error(error, "the cell").render("cell")) from None
        error = result.error
        if interrupts and error is not None:
            stopped = _cancelled(error)
            raise SqlmlCellError(format_error(stopped, text, "cell", first_line).rstrip())
        if error is not None:  # each statement that did not succeed, in order
            told = shown.diagnostics or [error]
            raise SqlmlCellError(
                "".join(format_error(d, text, "cell", first_line) for d in told).rstrip()
            )
        if result_var is not None and shown.last is not None:
            self.shell.user_ns[result_var] = shown.last
        return shown.value


def _cancelled(error: SqlmlError) -> SqlmlError:
    """The error a cancelled run reports, at the place of the run's ``error``, without the
    hint of ``sqlml run``'s --resume; a statement the database stopped is said cancelled."""
    if not isinstance(error, cancel.Cancelled):
        token = cancel.Token()
        token.cancel("Ctrl-C")
        located = error
        error = cancel.stopped_error(token)
        if located.line is not None:
            error.at(located.line, located.column or 1)
    stopped = copy.copy(error)
    stopped.hint = None
    return stopped


def server_version(datasource: Datasource) -> str | None:
    """The database's name and version, e.g. ``MariaDB 10.11.6``; None where unknown."""
    query = datasource.version_sql
    result = datasource.execute(query) if query else None
    return str(result.rows[0][0]) if result and result.rows else None


class _Shown:
    """What a cell shows of each statement's end, in the program's order: the outcomes of
    those that succeeded as they come, the diagnostics of the others kept for the cell's
    error."""

    def __init__(self, last_id: str, base_dir: Path) -> None:
        self.last_id, self.base_dir = last_id, base_dir
        self.last: Any = None  # the last result
        self.value: Any = None  # the cell's value: the last statement's result
        self.diagnostics: list[SqlmlError] = []  # but the cancellation's: said once

    def done(self, end: StatementEnd) -> None:
        outcome, diagnostic = end.outcome, end.verdict.besides_cancellation
        if diagnostic is not None:
            self.diagnostics.append(diagnostic)
        if outcome is None:
            return
        statement = ir.from_dict(end.step.params)
        if outcome.summary:
            print(outcome.summary, flush=True)
        for name in PLOT_ATTRIBUTES:
            plot = getattr(statement, "attributes", {}).get(name)
            if plot is not None:
                path = Path(plot).expanduser()
                display(Image(filename=str(path if path.is_absolute() else self.base_dir / path)))
        if outcome.result is None:
            return
        self.last = data_frame(outcome.result)
        if statement.id == self.last_id:
            self.value = self.last
        else:
            display(self.last)


def data_frame(result: ResultSet) -> Any:
    """A query's rows as a pandas DataFrame."""
    try:
        import pandas
    except ImportError:
        raise SqlmlCellError(
            "the sqlml magic returns pandas DataFrames, but pandas is not installed\n"
            "  hint: pip install 'sqlml[jupyter]'"
        ) from None
    return pandas.DataFrame.from_records(result.rows, columns=result.columns)


class _NotebookSink:
    """Progress as an HTML progress bar with a text line, updated in place."""

    def bar(self, description: str, total: int | None, unit: str) -> progress.Bar:
        return _NotebookBar(description, total, unit)


class _NotebookBar:
    def __init__(self, description: str, total: int | None, unit: str) -> None:
        self.description, self.total, self.unit = description, total, unit
        self.done, self.metrics = 0, ""
        self.shown_at = time.monotonic()
        self.handle = display(self._bundle(), raw=True, display_id=True)

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        self.done += advance
        if metrics:
            self.metrics = progress.format_metrics(metrics)
        now = time.monotonic()
        if now - self.shown_at >= REFRESH_EVERY:
            self.shown_at = now
            self.handle.update(self._bundle(), raw=True)

    def close(self) -> None:
        self.handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        count = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
        text = f"{self.description}: {count} {self.unit}"
        if self.metrics:
            text += f"  {self.metrics}"
        maximum = f' max="{self.total}"' if self.total else ""
        bar = f'<progress value="{self.done}"{maximum}></progress> ' if self.total else ""
        return {"text/plain": text, "text/html": f"<div>{bar}{html.escape(text)}</div>"}


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext sqlml``)."""
    ipython.register_magics(SqlmlMagics)
