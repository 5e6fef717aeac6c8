"""What a backend is: a place where programs run, with its program's form, its command-line
options, and how it runs a program and reports on, logs and stops a run."""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from sqlml import ir
    from sqlml.backends.reports import RunReport, StatementDone, WriteResult
    from sqlml.backends.runs import RunViews
    from sqlml.datasources import Datasource, ResultSet
    from sqlml.runtime.progress import Sink
    from sqlml.workflow import Workflow

# The commands about a run that a backend may leave out (the base class then says so).
RUN_COMMANDS = ("status", "logs", "stop")


@dataclass(frozen=True)
class Program:
    """A parsed and checked program, as a backend compiles or runs it."""

    statements: Sequence[ir.Statement]
    name: str  # its workflow's name: the file's stem
    source: str  # where its text came from, for messages: a file, or <-e>
    dialect: str  # sqlglot's name of its standard SQL's dialect
    base_dir: Path  # where its relative file paths resolve


class Backend(ABC):
    """A backend: ``sqlml run --backend NAME`` runs programs on it, ``sqlml compile --target
    TARGET`` writes its program, ``sqlml status|logs|stop RUN --backend NAME`` ask it about a
    run. Register an instance with :func:`sqlml.backends.register`.

    ``args`` are the parsed command line of the command, with the options
    :meth:`add_options` added.
    """

    name: ClassVar[str]  # the --backend value
    target: ClassVar[str]  # the --target value of its program, for sqlml compile
    run_name: ClassVar[str] = "id"  # what sqlml run prints to name a run: "id", "name"
    # Whether it runs the statements in this process: ``run`` then takes ``write_result``
    # (:data:`sqlml.backends.reports.WriteResult`: each result printed, or kept in a file with
    # ``--output-dir``), and DuckDB's parser reads through the run's own connection.
    runs_here: ClassVar[bool] = False
    # The help of sqlml logs and stop when it is their default backend (see ``default``).
    helps: ClassVar[Mapping[str, str]] = {}
    # What to do instead of a command about a run that it does not support.
    instead: ClassVar[Mapping[str, str]] = {}

    def add_options(self, parser: argparse.ArgumentParser, command: str) -> None:
        """Add its own options to ``command``'s parser: run, compile, status, logs or stop;
        or ``workflow``, how a workflow runs (``sqlml run``'s first ones, and the command
        line of a compiled program)."""
        return None

    def check(self, args: argparse.Namespace) -> str | None:
        """What is wrong with ``sqlml run``'s ``args`` on this backend (bad usage), if any."""
        return None

    @abstractmethod
    def compile(self, program: Program, args: argparse.Namespace) -> str:
        """``program``'s text in its form (``sqlml compile``)."""

    @abstractmethod
    def run(
        self,
        program: Program,
        args: argparse.Namespace | None,
        datasource: str | None,
        fmt: str,
        on_result: Callable[[Any], None] | None = None,
    ) -> int:
        """Run ``program`` on ``datasource`` (None: the default one); the exit status.

        ``args`` None: a program given as text (``sqlml -e``), run as by default, without
        announcing it. ``fmt``: how results are printed. ``on_result``: called with the run's
        result when it ran (for reports such as JUnit's).
        """

    def run_workflow(
        self,
        workflow: Workflow,
        args: argparse.Namespace,
        base_dir: Path,
        write_result: WriteResult | None,
    ) -> int:
        """Run the ``workflow`` of a compiled program (``sqlml.workflow_cli.main``) as its
        command line ``args`` say (``--datasource``, ``--format`` and the run options);
        the exit status."""
        raise self.unsupported("run_workflow")

    def run_statements(
        self,
        statements: Sequence[ir.Statement],
        name: str,
        worker: Executor,
        *,
        url: str | None = None,
        datasource: Datasource | None = None,
        on_done: StatementDone | None = None,
        sink: Sink | None = None,
        on_cancel: Callable[[], None] | None = None,
        interrupt: str = "Ctrl-C",
    ) -> RunReport:
        """Run ``statements`` for a person at a front end (the shell, a notebook, the page's
        editor) as the workflow ``name``, on ``worker`` (a one-thread pool), unrecorded, and
        wait for the end: on ``datasource`` (a connection the caller keeps) else on ``url``;
        each statement's end passed to ``on_done`` in order, their progress shown on
        ``sink``; each Ctrl-C cancels the run (``interrupt`` names it) and calls
        ``on_cancel``."""
        raise self.unsupported("run_statements")

    def status(
        self, run: str, datasource: str | None, args: argparse.Namespace
    ) -> tuple[str, ResultSet]:
        """The run ``run``'s state and its steps (:data:`sqlml.backends.STATUS_COLUMNS`)."""
        raise self.unsupported("status")

    def logs(self, run: str, datasource: str | None, args: argparse.Namespace) -> None:
        """Print the logs of the run ``run``'s steps."""
        raise self.unsupported("logs")

    def stop(self, run: str, datasource: str | None, args: argparse.Namespace) -> None:
        """Stop the run ``run``, reporting on stderr what it stopped."""
        raise self.unsupported("stop")

    def run_views(self) -> RunViews | None:
        """Its runs as ``sqlml ui`` shows them (:mod:`sqlml.backends.runs`); None: the page
        shows none."""
        return None

    def supports(self, command: str) -> bool:
        """Whether it implements ``command``: run, one of :data:`RUN_COMMANDS`, or
        ``run_workflow`` or ``run_statements``."""
        return getattr(type(self), command) is not getattr(Backend, command)

    def unsupported(self, command: str) -> SqlmlError:
        """The error for ``command``, which it does not support."""
        from sqlml.plugins import BACKENDS

        others = [name for name, other in BACKENDS.items() if other.supports(command)]
        hint = self.instead.get(command) or (
            f"sqlml {command} works with --backend {' or '.join(others)}"
            if others
            else f"no backend supports sqlml {command}"
        )
        return SqlmlError(f"the {self.name} backend does not support sqlml {command}", hint=hint)
