"""A 4-byte float (DuckDB's FLOAT and REAL, PostgreSQL's real, MySQL's FLOAT; SQLite has none)
is shown as the shortest text that reads back to the same float: 2.3, not
2.299999952316284, in every output format (table, CSV, JSON) and front end (``sqlml -e``,
the shell, a notebook's DataFrames, which keep float columns)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sqlml.cli import main
from sqlml.datasources import ResultSet, connect
from sqlml.datasources.duckdb.floats import shortest
from sqlml.repl.magic import data_frame
from tests.conftest import datasource_url
from tests.test_repl import Shell

FLOAT32 = {"duckdb": "FLOAT", "postgresql": "real", "mysql": "FLOAT"}
# MySQL's server sends a FLOAT as text of 6 significant digits: these values have fewer.
VALUES = ("2.3", "0.1", "80.17")
SHOWN = {
    "table": "     f\n-------\n   0.1\n   2.3\n 80.17\n(3 rows)\n",
    "csv": "f\n0.1\n2.3\n80.17\n",
    "json": '{"file": "<-e>", "statement": "s1-select", "line": 1, "column": 1, '
    '"rows": [{"f": 0.1}, {"f": 2.3}, {"f": 80.17}]}\n',
}


@pytest.fixture(params=sorted(FLOAT32))
def floats(request: pytest.FixtureRequest, tmp_path: Path, unique_name: str):
    """A URL and a query of a table of each database holding VALUES in a 4-byte float column."""
    url = datasource_url(request.param, tmp_path)
    execute(url, f"CREATE TABLE {unique_name} (f {FLOAT32[request.param]})")
    execute(url, f"INSERT INTO {unique_name} VALUES {', '.join(f'({v})' for v in VALUES)}")
    yield url, f"SELECT f FROM {unique_name} ORDER BY f"
    execute(url, f"DROP TABLE {unique_name}")


def execute(url: str, sql: str) -> ResultSet | None:
    """Run ``sql`` on a connection of its own (a DuckDB file is opened by one process at a time)."""
    ds = connect(url)
    try:
        return ds.execute(sql)
    finally:
        ds.close()


@pytest.mark.parametrize("fmt", sorted(SHOWN))
def test_every_format_shows_the_shortest_text(floats, fmt: str, capsys):
    url, query = floats
    assert main(["-e", query, "--datasource", url, "--format", fmt]) == 0
    assert capsys.readouterr().out == SHOWN[fmt]


def test_the_shell_shows_the_shortest_text(floats, tmp_path: Path):
    url, query = floats
    shell = Shell(url, tmp_path / "history")
    assert shell.run(f"{query};").startswith(SHOWN["table"])
    shell.quit()


def test_a_notebook_gets_floats_that_show_the_shortest_text(floats):
    url, query = floats
    frame = data_frame(execute(url, query))
    assert str(frame.f.dtype) == "float64"
    assert frame.f.tolist() == [0.1, 2.3, 80.17]


def test_duckdb_floats_nested_and_at_the_edges(capsys):
    """Values of 7 to 9 digits, the largest and a subnormal float, NaN, infinity, NULL, and
    FLOATs in lists, arrays, structs and maps (a DOUBLE beside them is left as it is)."""
    query = (
        "SELECT f, [f, NULL] AS l, [f, f]::FLOAT[2] AS a, {'f': f, 'd': 0.1::DOUBLE + 0.2} AS s, "
        "map([1], [f]) AS m FROM (VALUES (1.0000001::FLOAT), (16777216::FLOAT), "
        "(123456789::FLOAT), (3.4028235e38::FLOAT), (1e-40::FLOAT), ('-inf'::FLOAT), "
        "('nan'::FLOAT), (NULL)) AS t(f)"
    )
    assert main(["-e", query, "--datasource", "duckdb:///:memory:", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out.replace("NaN", '"NaN"'))["rows"]
    assert [row["f"] for row in rows] == [
        1.0000001, 16777216.0, 123456790.0, 3.4028235e38, 1e-40, -math.inf, "NaN", None
    ]  # fmt: skip
    assert rows[0] == {
        "f": 1.0000001,
        "l": [1.0000001, None],
        "a": [1.0000001, 1.0000001],
        "s": {"f": 1.0000001, "d": 0.30000000000000004},
        "m": {"1": 1.0000001},
    }


@pytest.mark.parametrize("text", ["2.3", "0.1", "1.0000001", "3.4028235e+38", "1e-45", "-0.0"])
def test_shortest_reads_back_to_the_same_float32(text: str):
    import numpy as np

    widened = float(np.float32(text))
    assert repr(shortest(widened)) == repr(float(text))
    assert np.float32(shortest(widened)) == np.float32(text)
