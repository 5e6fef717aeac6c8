"""SQLFlow programs check unchanged: the corpus in tests/sqlflow/ (format in its README.md).

Each positive file is checked as one program against a DuckDB database holding the tables of
``schema.sql``; every case must pass. Each negative case is checked alone and must be refused
at the line and column it names. A case whose header says ``dialect: mysql`` holds MySQL's
SQL: it is checked alone against the MySQL test server holding the tables it needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import duckdb
import pytest
from conftest import datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.datasources import connect
from sqlml.errors import SqlmlError

CORPUS = Path(__file__).parent / "sqlflow"
POSITIVE = ("kinds", "attributes", "feature_columns", "estimators", "syntax")


@dataclass(frozen=True)
class Case:
    id: str
    source: str  # where the form comes from
    first: int  # the file's line of the statement's first line
    last: int
    text: str
    error: tuple[int, int] | None  # negative.sql: the line and column it must be refused at
    dialect: str  # of its SQL: duckdb but where its header says otherwise
    tables: tuple[str, ...]  # those it reads (its header's needs)


def cases(name: str) -> list[Case]:
    """The cases of ``tests/sqlflow/<name>.sql``."""
    lines = (CORPUS / f"{name}.sql").read_text().split("\n")
    starts = [n for n, line in enumerate(lines) if line.startswith("-- from: ")]
    found = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        header, body = {}, start + 1
        while body < end and (match := re.match(r"-- (\w+): (.*)", lines[body])):
            header[match[1]] = match[2]
            body += 1
        while end > body and not lines[end - 1].strip():
            end -= 1
        error = re.fullmatch(r"line (\d+) column (\d+)", header.get("error", ""))
        found.append(
            Case(
                id=f"{name}#{index + 1}",
                source=lines[start].removeprefix("-- from: "),
                first=body + 1,
                last=end,
                text="\n".join(lines[body:end]),
                error=(int(error[1]), int(error[2])) if error else None,
                dialect=header.get("dialect", "duckdb"),
                tables=_tables(header.get("needs", "")),
            )
        )
    return found


def _tables(needs: str) -> tuple[str, ...]:
    """The tables of a ``needs`` header: ``iris.train, iris.test; model m``."""
    tables = needs.split(";")[0].strip()
    return () if tables in ("", "nothing") else tuple(t.strip() for t in tables.split(","))


@pytest.fixture(scope="module")
def datasource(tmp_path_factory):
    path = tmp_path_factory.mktemp("sqlflow") / "corpus.duckdb"
    with duckdb.connect(str(path)) as connection:
        for statement in (CORPUS / "schema.sql").read_text().split(";"):
            if statement.strip():
                connection.execute(statement)
    source = connect(f"duckdb:///{path}")
    yield source
    source.close()


@cache
def _file_errors(name: str, source_id: int, source: object) -> tuple[SqlmlError, ...]:
    text = (CORPUS / f"{name}.sql").read_text()
    return tuple(errors_of(check_program(text, "duckdb", source)))  # type: ignore[arg-type]


def _mysql_errors(case: Case, url: str) -> list[SqlmlError]:
    """The errors of ``case`` checked alone against MySQL holding the tables it needs."""
    schema = (CORPUS / "schema.sql").read_text().split(";")
    source = connect(url)
    try:
        for table in case.tables:
            source.execute(f"CREATE SCHEMA IF NOT EXISTS {table.partition('.')[0]}")
            create = next(s.strip() for s in schema if f"CREATE TABLE {table} (" in s)
            source.execute(create.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
        return errors_of(check_program(case.text, "mysql", source))
    finally:
        source.close()


def test_the_corpus_is_as_large_as_the_issue_asks():
    positive = sum(len(cases(name)) for name in POSITIVE)
    assert positive >= 250
    assert len(cases("negative")) >= 30
    assert all(case.error for case in cases("negative"))


@pytest.mark.parametrize("case", [c for n in POSITIVE for c in cases(n)], ids=lambda c: c.id)
def test_a_sqlflow_statement_passes_check(case: Case, datasource, tmp_path):
    name = case.id.partition("#")[0]
    if case.dialect == "mysql":
        found = _mysql_errors(case, datasource_url("mysql", tmp_path))
        first = 1
    else:
        found = _file_errors(name, id(datasource), datasource)
        first = case.first
    errors = [
        f"{error.line - first + 1}:{error.column} {error.message}"
        for error in found
        if error.line is not None and first <= error.line <= first + case.last - case.first
    ]
    assert not errors, f"{case.id} ({case.source}):\n{case.text}"


@pytest.mark.parametrize("name", POSITIVE)
def test_each_positive_file_checks_as_one_program(name: str, datasource):
    """No error outside the cases either (a quote misread in one case shifts the rest)."""
    spans = [(case.first, case.last) for case in cases(name)]
    stray = [
        f"{error.line}:{error.column} {error.message}"
        for error in _file_errors(name, id(datasource), datasource)
        if not any(first <= (error.line or 0) <= last for first, last in spans)
    ]
    assert not stray


@pytest.mark.parametrize("case", cases("negative"), ids=lambda c: c.id)
def test_a_statement_sqlflow_refuses_is_refused_where_sqlflow_says(case: Case):
    errors = check_program(case.text, "duckdb")
    found = [(error.line, error.column) for error in errors]
    assert case.error in found, f"{case.id} ({case.source}): {[str(e) for e in errors]}"
