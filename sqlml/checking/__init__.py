"""``sqlml check``: every error in a program, found without running it.

Without a datasource: the grammar, estimators, attributes, feature columns and SQL syntax.
With one (:mod:`sqlml.checking.database`): also that the tables and columns each query
reads exist, as the program's earlier statements leave them (:mod:`.program_tables`), that
the LABEL column is selected, that every model used exists or is trained earlier in the
program; and warnings (:class:`~sqlml.errors.SqlmlWarning`) about features that give the
label away (:mod:`.leaks`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlml.datasources import Datasource
from sqlml.errors import SqlmlError, SqlmlWarning
from sqlml.grammar.recovery import parse_all
from sqlml.semantics.analyze import lower, numbered


def check_program(
    text: str, dialect: str, datasource: Datasource | None = None
) -> list[SqlmlError]:
    """All errors and warnings in ``text``, in program order; empty when the program is fine."""
    with Checker(dialect, datasource) as checker:
        return checker.check(text)


class Checker:
    """Programs checked one after the other, as ``sqlml run`` runs them: against a
    datasource, each as those before leave its tables and models (a context manager: nothing
    the check replays lasts)."""

    def __init__(self, dialect: str, datasource: Datasource | None = None) -> None:
        self.dialect = dialect
        self.database = None
        if datasource is not None:
            from sqlml.checking.database import DatabaseCheck  # not for a check of the text

            self.database = DatabaseCheck(datasource, dialect)

    def __enter__(self) -> Checker:
        if self.database is not None:
            self.database.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.database is not None:
            self.database.__exit__(*exc)

    def check(self, text: str) -> list[SqlmlError]:
        """All errors and warnings in the program ``text``, in program order."""
        program, found = parse_all(text)
        lowered = []
        for statement, prefix in numbered(program):
            try:
                lowered.append((lower(statement, prefix, self.dialect), statement))
            except SqlmlError as error:
                found.append(error)
        if self.database is not None:
            found.extend(self.database.check(lowered, text))
        return sorted(
            found, key=lambda e: (e.line or 0, e.column or 0, isinstance(e, SqlmlWarning))
        )


def errors_of(found: Sequence[SqlmlError]) -> list[SqlmlError]:
    """What of a check's findings are errors (not warnings)."""
    return [each for each in found if not isinstance(each, SqlmlWarning)]
