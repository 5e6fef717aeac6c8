"""sqlml check reports no error that sqlml run does not, for the programs of the docs that
other tests do not run on a database: the examples on MariaDB (written for DuckDB, most of
them fail at their first statement there: the check may say no more than the run), and the
Kubernetes tutorial's programs on DuckDB and MariaDB. Each runs in a fresh database, and no
statement of them trains: those that would read tables the database lacks.

(The examples on DuckDB, the other tutorials' programs and SQLFlow's tutorials are checked
by the tests that run them: tests/test_docs_examples.py, tests/test_sqlflow_tutorials.py.)
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from check_against_run import check_errors, false_errors, unpassed_in_report
from conftest import ROOT, datasource_url
from test_docs_examples import EXAMPLE_FILES, blocks_of

from sqlml.cli import main
from sqlml.runtime.datasource import connect, dialect_of

KUBERNETES = {
    block.tag: block.text
    for block in blocks_of(ROOT / "docs" / "tutorial-kubernetes.md")
    if block.lang == "sql"
}
PROGRAMS = [
    *(pytest.param(f"examples/{name}", "mysql", id=f"{name}-mysql") for name in EXAMPLE_FILES),
    *(
        pytest.param(name, kind, id=f"{name}-{kind}")
        for name in KUBERNETES
        for kind in ("duckdb", "mysql")
    ),
]


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


@pytest.mark.parametrize(("name", "kind"), PROGRAMS)
def test_check_says_no_more_than_the_run(name, kind, fresh_url, tmp_path, capsys):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    program = tmp_path / name
    if name in KUBERNETES:
        program.write_text(KUBERNETES[name])
    found = check_errors(program, fresh_url)
    report = tmp_path / "run.xml"
    main(["run", str(program), "--datasource", fresh_url, "--junit", str(report)])
    capsys.readouterr()
    unpassed = unpassed_in_report(report, program, dialect_of(fresh_url))
    assert false_errors(found, program, unpassed) == []
