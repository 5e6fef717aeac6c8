"""Datasources: URLs, round trips of every column type, atomic table replacement."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from sqlml.datasources import parse_url
from sqlml.errors import DatasourceError


@pytest.mark.parametrize(
    ("text", "scheme", "path", "host", "port", "user", "shown"),
    [
        ("duckdb:///file.duckdb", "duckdb", "file.duckdb", "", None, "", "duckdb:///file.duckdb"),
        ("duckdb:////abs/f.duckdb", "duckdb", "/abs/f.duckdb", "", None, "", "duckdb:////abs/f.duckdb"),
        ("duckdb://", "duckdb", ":memory:", "", None, "", "duckdb:///:memory:"),
        ("sqlite:///x.db", "sqlite", "x.db", "", None, "", "sqlite:///x.db"),
        ("mysql://root:pw@127.0.0.1:3306/test", "mysql", "test", "127.0.0.1", 3306, "root",
         "mysql://root:***@127.0.0.1:3306/test"),
        ("mariadb://u@h/db", "mysql", "db", "h", None, "u", "mysql://u@h/db"),
        ("postgres://u:p%40ss@h:5432/d", "postgresql", "d", "h", 5432, "u",
         "postgresql://u:***@h:5432/d"),
    ],
)  # fmt: skip
def test_url_parsing(text, scheme, path, host, port, user, shown):
    url = parse_url(text)
    assert (url.scheme, url.path, url.host, url.port, url.user) == (scheme, path, host, port, user)
    assert str(url) == shown
    assert "pw" not in repr(url) and "p@ss" not in repr(url)


def test_password_is_decoded_but_never_shown():
    url = parse_url("postgres://u:p%40ss@h:5432/d")
    assert url.password == "p@ss"
    assert "p@ss" not in str(url) + repr(url)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("oracle://x/y", "unsupported datasource URL 'oracle://x/y'"),
        ("mysql://root:secret@/test", "needs a host and a database"),
        ("mysql://root:secret@h:99999/test", "bad datasource URL"),
        ("just-a-path.db", "unsupported datasource URL"),
    ],
)
def test_bad_urls(text, message):
    with pytest.raises(DatasourceError) as caught:
        parse_url(text)
    assert message in caught.value.message
    assert "secret" not in caught.value.message


def test_round_trip_of_every_column_kind(datasource, unique_name):
    columns = {
        "i": np.array([1, -2, 3], dtype=np.int64),
        "f": np.array([0.5, np.nan, 2.25]),
        "s": np.array(["a", None, "o'q; --"], dtype=object),
        "b": np.array([True, False, True]),
    }
    datasource.write_table([unique_name], columns)
    try:
        back = datasource.read(f"SELECT * FROM {unique_name} ORDER BY i")
    finally:
        datasource.execute(f"DROP TABLE {unique_name}")
    assert list(back) == ["i", "f", "s", "b"]
    assert back["i"].tolist() == [-2, 1, 3]
    assert back["f"][0] != back["f"][0] and back["f"][1:].tolist() == [0.5, 2.25]  # NaN first
    assert back["s"].tolist() == [None, "a", "o'q; --"]
    assert [bool(v) for v in back["b"].tolist()] == [False, True, True]


def test_a_failed_write_leaves_the_old_table_intact(datasource, unique_name, monkeypatch):
    datasource.write_table([unique_name], {"x": np.array([1, 2, 3])})

    def broken(table, columns):
        raise DatasourceError("connection lost")

    monkeypatch.setattr(datasource, "_insert", broken)
    with pytest.raises(DatasourceError):
        datasource.write_table([unique_name], {"x": np.array([9])})
    monkeypatch.undo()
    try:
        rows = datasource.execute(f"SELECT x FROM {unique_name} ORDER BY x").rows
        leftovers = [
            name for name in _tables(datasource) if name.startswith(f"{unique_name}__sqlml")
        ]
    finally:
        datasource.execute(f"DROP TABLE {unique_name}")
    assert [r[0] for r in rows] == [1, 2, 3]
    assert leftovers == []


def _tables(datasource) -> list[str]:
    if datasource.dialect == "sqlite":
        rows = datasource.execute("SELECT name FROM sqlite_master WHERE type = 'table'").rows
    else:
        rows = datasource.execute(
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_schema = {datasource.current_schema}"
        ).rows
    return [r[0] for r in rows]


def test_identifiers_are_quoted(datasource, unique_name):
    hostile = f'{unique_name}"; DROP TABLE x; --`'
    datasource.write_table([hostile], {'c"`; --': np.array([1])})
    try:
        assert datasource.table_exists([hostile])
        assert datasource.read(f"SELECT * FROM {datasource.quote([hostile])}") == {
            'c"`; --': pytest.approx(np.array([1]))
        }
    finally:
        datasource.execute(f"DROP TABLE {datasource.quote([hostile])}")
    assert not datasource.table_exists([hostile])


def test_sqlite_bulk_insert_is_one_transaction(tmp_path, monkeypatch):
    """In autocommit every row would commit (a disk sync per row): the rows of a write go in
    one transaction."""
    from sqlml.datasources import arrays, connect

    ds = connect(f"sqlite:///{tmp_path / 'x.sqlite'}")
    seen: list[bool] = []
    real = arrays.python_values

    def watched(values: np.ndarray) -> list:
        for value in real(values):
            seen.append(ds._con.in_transaction)
            yield value

    monkeypatch.setattr(arrays, "python_values", watched)
    ds.write_table(["t"], {"id": np.arange(100), "x": np.linspace(0, 1, 100)})
    assert len(seen) == 200 and all(seen)
    assert not ds._con.in_transaction
    assert ds.execute("SELECT count(*), sum(id) FROM t").rows == [(100, 4950)]
    ds.close()


def test_mysql_drops_the_leftovers_of_a_long_named_table(mysql_url, unique_name):
    """Helper tables are named after a table's first 24 bytes: a write into a longer-named
    table still finds and drops the staging table a killed write left behind."""
    from sqlml.datasources import connect

    name = f"{unique_name}_with_a_long_name"  # 31 characters
    leftover = f"{name[:24]}__sqlml_new_0123456789ab"
    ds = connect(mysql_url)
    try:
        ds.execute(f"CREATE TABLE {leftover} (x BIGINT)")
        ds.write_table([name], {"x": np.array([1, 2])})
        assert [t for t in _tables(ds) if t.startswith(name[:24])] == [name]
        assert [r[0] for r in ds.execute(f"SELECT x FROM {name} ORDER BY x").rows] == [1, 2]
    finally:
        ds.execute(f"DROP TABLE IF EXISTS {leftover}")
        ds.execute(f"DROP TABLE IF EXISTS {name}")
        ds.close()


@pytest.mark.parametrize(
    "text",
    [
        "mysql://user:p%40ss%2Fw%3Ard@127.0.0.1:3306/test",
        "postgresql://root@[::1]:5432/db",
        "mysql://host/db",
        "duckdb:////tmp/x.duckdb",
        "sqlite:///relative.db",
    ],
)
def test_a_url_with_its_password_reads_back_the_same(text):
    """What a started process gets in $SQLML_DATASOURCE: the same URL, password and all."""
    url = parse_url(text)
    again = parse_url(url.with_password())
    assert again == url and again.password == url.password


def test_sqlite_has_the_math_of_compiled_models_after_tensorflow_loaded_its_own(tmp_path):
    """TensorFlow brings a SQLite built without math functions; loaded first, it is the one
    the sqlite3 module reads through. The datasource then gives its connection EXP, LN,
    POWER and SQRT itself (what models compiled to SQL call)."""
    script = (
        "import tensorflow, sys\n"
        "from sqlml.datasources import connect\n"
        "ds = connect(sys.argv[1])\n"
        "print(ds.execute('SELECT exp(0), ln(1), power(2, 3), sqrt(4), exp(NULL), ln(-1), "
        "exp(1000)').rows)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, f"sqlite:///{tmp_path / 'm.db'}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert result.stdout.strip() == "[(1.0, 0.0, 8.0, 2.0, None, None, inf)]"
