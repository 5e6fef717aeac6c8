"""Row partitions of a SELECT: on every database, the SELECT staged once, each row in exactly
one part, each part read on a connection of its own, the same parts when staged again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sqlml.datasources import Datasource, connect
from sqlml.runtime import partitions

ROWS = 300


@pytest.fixture
def rows_table(datasource: Datasource, unique_name: str) -> str:
    """A table of ROWS rows with duplicates, NULLs, text and floats, and a query column."""
    rng = np.random.default_rng(1)
    values = np.round(rng.normal(size=ROWS), 3)
    values[::17] = values[0]  # repeated values
    values[1:5] = [1e20, -3.5e12, 0.5, -0.5]  # beyond 64-bit integers; halves round alike
    datasource.write_table(
        [unique_name],
        {
            "x": values,
            "name": np.array([f"n{i % 40}" for i in range(ROWS)], dtype=object),
            "query": np.arange(ROWS) % 23,
        },
    )
    return unique_name


def _parts(
    datasource: Datasource, select: str, count: int, keys: list[str] | None = None
) -> list[Counter]:
    """Each part's rows as a multiset: staged on ``datasource``, every part read on a
    connection of its own, the helper table dropped after."""
    kinds = partitions.columns(datasource, select)
    table, relation = partitions.stage(datasource, select, kinds, count, keys)
    found = []
    try:
        for part in range(count):
            ds = connect(_url(datasource))
            try:
                read = ds.read(partitions.part(ds, relation, kinds, part))
            finally:
                ds.close()
            found.append(Counter(zip(*(read[name].tolist() for name in kinds), strict=True)))
    finally:
        partitions.drop(datasource, table)
    assert not datasource.table_exists([table])
    return found


def _rows(datasource: Datasource, select: str) -> Counter:
    every = datasource.read(select)
    return Counter(zip(*(values.tolist() for values in every.values()), strict=True))


@pytest.mark.parametrize("count", [1, 2, 4])
def test_every_row_in_exactly_one_part(datasource: Datasource, rows_table: str, count: int) -> None:
    select = f"SELECT x, name, query FROM {datasource.quote([rows_table])}"
    parts = _parts(datasource, select, count)
    assert sum(parts, Counter()) == _rows(datasource, select)
    assert sum(sum(part.values()) for part in parts) == ROWS
    assert all(part for part in parts)  # 300 distinct-ish rows: no part empty
    assert _parts(datasource, select, count) == parts  # staged again: the same parts


def test_a_join_without_a_key_is_split_into_disjoint_parts(
    datasource: Datasource, rows_table: str
) -> None:
    """A SELECT of a join and an aggregate, no key: each of its rows in one part."""
    table = datasource.quote([rows_table])
    select = (
        f"SELECT t.x, t.name, c.n FROM {table} AS t JOIN (SELECT query, COUNT(*) AS n "
        f"FROM {table} GROUP BY query) AS c ON t.query = c.query"
    )
    parts = _parts(datasource, select, 3)
    assert sum(parts, Counter()) == _rows(datasource, select)
    assert sum(sum(part.values()) for part in parts) == ROWS
    assert all(part for part in parts)
    assert not set(parts[0]) & set(parts[1]) and not set(parts[1]) & set(parts[2])


def test_a_key_keeps_its_rows_together(datasource: Datasource, rows_table: str) -> None:
    select = f"SELECT x, query FROM {datasource.quote([rows_table])}"
    parts = _parts(datasource, select, 3, keys=["query"])
    queries = [{row[1] for row in part} for part in parts]
    assert sum(len(found) for found in queries) == 23  # each query in one part only
    assert sum(sum(part.values()) for part in parts) == ROWS


@pytest.mark.mysql
def test_mysql_hashes_a_double_as_integers_not_as_its_text(mysql_url: str) -> None:
    """MariaDB writes a DOUBLE as text slowly (a 2,000,000-row part: 10 s against 2.6 s)."""
    ds = connect(mysql_url)
    try:
        select = "SELECT 1.5e0 AS x, 'a' AS name, 2 AS n"
        kinds = partitions.columns(ds, select)
        assert kinds == {"x": "f", "name": "O", "n": "i"}
        sql = partitions.number(ds, kinds, 2, None)
        assert "IF(ABS(`x`) < 9e3, CAST(`x` * 1e15 AS SIGNED), CAST(`x` AS SIGNED))" in sql
        assert "CONCAT_WS(',', `x`" not in sql and "`name`, `n`)" in sql
    finally:
        ds.close()


def test_a_datasource_without_a_hash_numbers_parts_by_the_rank_of_the_keys(tmp_path: Path) -> None:
    """The base class's partitioning, standard SQL: what a datasource declaring none uses."""
    ds = connect(f"duckdb:///{tmp_path / 'x.duckdb'}")
    try:
        ds.partitioning = Datasource.partitioning  # the instance's: the class keeps DuckDB's
        kinds = {"a": "i"}
        assert 'DENSE_RANK() OVER (ORDER BY "a")' in partitions.number(ds, kinds, 2, None)
        table, relation = partitions.stage(ds, "SELECT 1 AS a", kinds, 2)
        assert ds.execute(partitions.part(ds, relation, kinds, 1)).rows == []
        assert ds.execute(partitions.part(ds, relation, kinds, 0)).rows == [(1,)]
        partitions.drop(ds, table)
    finally:
        ds.close()


def _url(datasource: Datasource) -> str:
    """The datasource's URL, its password too (the test servers have none)."""
    url = datasource.url
    if not url.host:
        return f"{url.scheme}:///{url.path}"
    return f"{url.scheme}://{url.user}@{url.host}:{url.port}/{url.path}"
