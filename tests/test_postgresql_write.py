"""PostgreSQL writes through one binary COPY per write (postgresql/binary_write.py), and table
fingerprints from row versions."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from sqlml.datasources import connect
from sqlml.datasources.postgresql.binary_write import binary_rows
from sqlml.datasources.postgresql.source import PostgreSQLSource
from sqlml.errors import DatasourceError
from tests.conftest import datasource_url


@pytest.fixture
def source(tmp_path) -> Iterator[PostgreSQLSource]:
    ds = connect(datasource_url("postgresql", tmp_path))
    yield ds
    ds.close()


def test_rows_of_numbers_are_records_and_nulls_are_left_out():
    """Two rows: the field count, then length and big-endian value; NaN is a NULL (-1)."""
    columns = {"i": np.array([1, -2]), "f": np.array([0.5, np.nan]), "b": np.array([True, False])}
    row_1 = b"\x00\x03" + b"\x00\x00\x00\x08" + (1).to_bytes(8, "big") + b"\x00\x00\x00\x08"
    row_1 += np.array(0.5, ">f8").tobytes() + b"\x00\x00\x00\x01\x01"
    row_2 = b"\x00\x03" + b"\x00\x00\x00\x08" + (-2).to_bytes(8, "big", signed=True)
    row_2 += b"\xff\xff\xff\xff" + b"\x00\x00\x00\x01\x00"
    assert b"".join(bytes(chunk) for chunk in binary_rows(columns)) == row_1 + row_2


def test_batches_go_through_one_copy_and_a_failed_batch_writes_nothing(source, unique_name):
    ids = np.arange(10)
    batches = [{"id": ids[:4], "x": ids[:4] * 0.5}, {"id": ids[4:], "x": ids[4:] * 0.5}]
    assert source.write_batches([unique_name], iter(batches)) == 10
    try:
        found = source.read(f"SELECT * FROM {unique_name} ORDER BY id")
        assert found["id"].tolist() == ids.tolist() and found["x"].tolist() == (ids * 0.5).tolist()

        def failing() -> Iterator[dict[str, np.ndarray]]:
            yield {"id": ids[:4], "x": ids[:4] * 2.0}
            raise DatasourceError("the second batch failed")

        with pytest.raises(DatasourceError, match="second batch"):
            source.write_batches([unique_name], failing())
        assert source.read(f"SELECT x FROM {unique_name}")["x"].tolist()[:2] == [0.0, 0.5]
        assert source.execute("SELECT 1").rows == [(1,)]
    finally:
        source.execute(f"DROP TABLE IF EXISTS {unique_name}")


def test_a_table_is_fingerprinted_by_its_row_versions_a_view_by_its_rows(source, unique_name):
    source.write_table([unique_name], {"x": np.array([1, 2, 3])})
    view = f"{unique_name}_v"
    source.execute(f"CREATE VIEW {view} AS SELECT x * 2 AS y FROM {unique_name}")
    try:
        table, rows = source.table_fingerprint([unique_name]), source.table_fingerprint([view])
        assert source.table_fingerprint([unique_name]) == table
        source.execute(f"UPDATE {unique_name} SET x = x WHERE x = 1")  # a new row version
        assert source.table_fingerprint([unique_name]) != table
        assert source.table_fingerprint([view]) == rows
        source.execute(f"UPDATE {unique_name} SET x = 4 WHERE x = 1")
        assert source.table_fingerprint([view]) != rows
    finally:
        source.execute(f"DROP VIEW IF EXISTS {view}")
        source.execute(f"DROP TABLE IF EXISTS {unique_name}")
