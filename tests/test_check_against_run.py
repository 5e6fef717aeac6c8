"""sqlml check reports no error that sqlml run does not, for the programs of the docs that
other tests do not run on a database: the examples on MariaDB (written for DuckDB, most fail
at their first statement there: the check may say no more than the run), each tutorial's
programs on the database the tutorial is not written for, in the order it runs them, and
the Kubernetes tutorial's programs on DuckDB and MariaDB. Each session runs in a fresh
database, and none trains: what would train reads tables the database lacks.

(The examples on DuckDB, the tutorials' programs on their own databases and SQLFlow's
tutorials are checked by the tests that run them: tests/test_docs_examples.py and
tests/test_sqlflow_tutorials.py.)
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from check_against_run import check_errors, false_errors, programs_run, unpassed_in_report
from conftest import ROOT, datasource_url
from test_docs_examples import EXAMPLE_FILES, FILE_NAME, blocks_of

from sqlml.cli import main
from sqlml.datasources import connect, dialect_of

DOCS = ROOT / "docs"


def tutorial_programs(doc: Path) -> list[tuple[str, str]]:
    """The programs a tutorial runs (``sqlml run FILE...`` in its sh blocks), in order: each
    file's name and text, a sql block saved before it or a file of the checkout. (The
    Kubernetes tutorial runs none here: its sql blocks, in order.)"""
    saved: dict[str, str] = {}
    runs = []
    for block in blocks_of(doc):
        if block.lang == "sql" and FILE_NAME.fullmatch(block.tag):
            saved[block.tag] = block.text
        elif block.lang == "sh" and not block.tag:
            runs += [(name, saved.get(name) or (ROOT / name).read_text())
                     for name in programs_run(block.text)]  # fmt: skip
    return runs or list(saved.items())


SESSIONS = [
    *(
        pytest.param("mysql", [(f"examples/{name}", (ROOT / "examples" / name).read_text())],
                     id=f"{name}-mysql")
        for name in EXAMPLE_FILES
    ),
    pytest.param("mysql", tutorial_programs(DOCS / "tutorial.md"), id="tutorial.md-mysql"),
    pytest.param("duckdb", tutorial_programs(DOCS / "tutorial-mysql.md"),
                 id="tutorial-mysql.md-duckdb"),
    *(
        pytest.param(kind, tutorial_programs(DOCS / "tutorial-kubernetes.md"),
                     id=f"tutorial-kubernetes.md-{kind}")
        for kind in ("duckdb", "mysql")
    ),
]  # fmt: skip


@pytest.fixture
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of its own: a DuckDB file, or a database created on the MySQL server."""
    kind = request.node.callspec.params["kind"]
    url = datasource_url(kind, tmp_path)
    if kind == "duckdb":
        yield url
        return
    database = f"sqlml_check_{uuid.uuid4().hex[:10]}"
    admin = connect(url)
    admin.execute(f"CREATE DATABASE {database}")
    try:
        yield f"{url.rsplit('/', 1)[0]}/{database}"
    finally:
        admin.execute(f"DROP DATABASE {database}")
        admin.close()


@pytest.mark.parametrize(("kind", "programs"), SESSIONS)
def test_check_says_no_more_than_the_run(kind, programs, fresh_url, tmp_path, capsys):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    false = []
    for index, (name, text) in enumerate(programs):
        program = tmp_path / name
        program.write_text(text)
        found = check_errors(program, fresh_url)
        report = tmp_path / f"run-{index}.xml"
        main(["run", str(program), "--datasource", fresh_url, "--junit", str(report)])
        capsys.readouterr()
        false += false_errors(
            found, program, unpassed_in_report(report, program, dialect_of(fresh_url))
        )
    assert false == []
