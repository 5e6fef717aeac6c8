"""The bulk write path: exact round trips of awkward values on every database, both MySQL
paths (LOAD DATA LOCAL INFILE and multi-row INSERTs), and TO PREDICT writes that fail or are
killed half way, which must leave the previous result table as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlml.cli import main
from sqlml.datasources import bulk, connect
from sqlml.errors import DatasourceError
from sqlml.models.store import ModelStore

TEXTS = ["a\tb", None, "c\\\r\n é😀", "NULL", "\\N", "", "o'q; --", '"x"', "\\", "tab\t"]


def awkward_columns() -> dict[str, np.ndarray]:
    """Ten rows of values that text formats get wrong: escapes, NULL look-alikes, extremes."""
    return {
        "k": np.arange(10),
        "i": np.array([1, -(2**63), 2**63 - 1, 0, -1, 10, 99, -100, 123456789012345678, 7]),
        "f": np.array(
            [0.1, np.nan, 5e-324, -0.0, 1 / 3, 2.2250738585072014e-308, 1e22, 1e23, -1.5, 0.3]
        ),
        "g": np.array([1.7976931348623157e308, -2.5e-310, 1e-7, 100.0, 2**53 + 2.0] * 2),
        "h": np.array([1.5, 0.1, -2.75, 3e38, 1e-30] * 2, dtype=np.float32),
        "s": np.array(TEXTS, dtype=object),
        "y": np.array([b"\x00\xff\n", b"", None, b"\\N\t", b"\r\\", *[b"x"] * 5], dtype=object),
        "b": np.array([True, False] * 5),
    }


def assert_same(back: dict[str, np.ndarray], sent: dict[str, np.ndarray]) -> None:
    assert list(back) == list(sent)
    for name, values in sent.items():
        got = back[name]
        if values.dtype.kind == "f":
            expected = values.astype(np.float64)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), name
            assert np.array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)]), name
        elif values.dtype.kind == "b":
            assert [bool(v) for v in got.tolist()] == values.tolist(), name
        elif values.dtype == object:
            as_sent = [bytes(v) if isinstance(v, bytearray) else v for v in got.tolist()]
            assert as_sent == values.tolist(), name
        else:
            assert got.tolist() == values.tolist(), name


def round_trip(datasource, table: str, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    datasource.write_table([table], columns)
    try:
        return datasource.read(f"SELECT * FROM {datasource.quote([table])} ORDER BY k")
    finally:
        datasource.execute(f"DROP TABLE {datasource.quote([table])}")


def random_doubles(count: int, seed: int) -> np.ndarray:
    """Finite doubles from random bit patterns (every exponent, subnormals included)."""
    bits = np.random.default_rng(seed).integers(0, 2**64 - 1, count, dtype=np.uint64)
    values = bits.view(np.float64)
    return values[np.isfinite(values)]


def test_awkward_values_round_trip_exactly(datasource, unique_name):
    columns = awkward_columns()
    assert_same(round_trip(datasource, unique_name, columns), columns)


def test_many_rows_in_small_chunks_round_trip_exactly(datasource, unique_name, monkeypatch):
    monkeypatch.setattr(bulk, "CHUNK_BYTES", 4096)  # many chunks and packets, halved ones too
    doubles = random_doubles(30_000, seed=4)
    rows = len(doubles)
    texts = np.array([None if i % 7 == 0 else f"{i}\t{i % 3}\n" for i in range(rows)], object)
    texts[5] = "long " * 5000  # a value far wider than the others: its chunk is split
    columns = {
        "k": np.arange(rows),
        "x": doubles,
        "n": np.random.default_rng(5).standard_normal(rows),
        "t": texts,
    }
    assert_same(round_trip(datasource, unique_name, columns), columns)


def test_an_empty_result_writes_an_empty_table(datasource, unique_name):
    columns = {"k": np.empty(0, np.int64), "x": np.empty(0), "s": np.empty(0, object)}
    back = round_trip(datasource, unique_name, columns)
    assert list(back) == ["k", "x", "s"] and all(len(v) == 0 for v in back.values())


def test_mysql_writes_through_load_data(mysql_url, unique_name):
    ds = connect(mysql_url)
    try:
        before = _status(ds, "Com_insert")
        columns = awkward_columns()
        assert_same(round_trip(ds, unique_name, columns), columns)
        assert ds._load_con is not None and ds._load_con.open  # the LOAD DATA connection
        assert _status(ds, "Com_insert") == before  # no INSERT on the main connection
    finally:
        ds.close()


def test_mysql_falls_back_to_multi_row_inserts(mysql_url, unique_name, monkeypatch):
    ds = connect(mysql_url)
    monkeypatch.setattr(ds, "_local_infile", lambda: False)  # as if the server had it off
    try:
        columns = awkward_columns()
        assert_same(round_trip(ds, unique_name, columns), columns)
        doubles = random_doubles(20_000, seed=6)
        before = _status(ds, "Com_insert")
        many = {"k": np.arange(len(doubles)), "x": doubles, "p%s": -doubles}
        assert_same(round_trip(ds, unique_name, many), many)
        statements = _status(ds, "Com_insert") - before
        assert ds._load_con is None
    finally:
        ds.close()
    # about 1 MB of values: one statement per 10,000 rows, not one per row
    assert 2 <= statements <= 4, statements


def _status(ds, name: str) -> int:
    return int(ds.execute(f"SHOW SESSION STATUS LIKE '{name}'").rows[0][1])


def test_mysql_cannot_store_infinity(mysql_url, unique_name):
    ds = connect(mysql_url)
    try:
        with pytest.raises(DatasourceError) as caught:
            ds.write_table([unique_name], {"x": np.array([1.0, np.inf])})
        assert not ds.table_exists([unique_name])
    finally:
        ds.close()
    assert "column x holds an infinite value" in caught.value.message
    assert caught.value.hint


@pytest.mark.parametrize("kind", ["mysql", "postgresql"])
def test_integers_beyond_bigint_are_refused(kind, tmp_path, unique_name):
    from conftest import datasource_url

    ds = connect(datasource_url(kind, tmp_path))
    try:
        with pytest.raises(DatasourceError, match="above 2\\*\\*63 - 1"):
            ds.write_table([unique_name], {"u": np.array([1, 2**64 - 1], dtype=np.uint64)})
        assert not ds.table_exists([unique_name])
    finally:
        ds.close()


EDGE_DOUBLES = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
    1.7976931348623157e308, -1.7976931348623157e308, 1e23, 1e22, 0.1, 0.5, 1 / 3, 2**53 + 2.0,
    9007199254740993.0, 1e-7, 1e21, 123456789012345680.0, 1e16, 4.35e-322]  # fmt: skip


def load_data_fields(columns: dict[str, np.ndarray]) -> list[list[str]]:
    """The fields of each line of the LOAD DATA text written for ``columns``."""
    text = b"".join(bulk.text_chunks(columns)).decode()
    assert text.endswith("\n") or not text
    return [line.split("\t") for line in text.split("\n")[:-1]]


def assert_shortest_exact(values: np.ndarray) -> None:
    """Each double's text reads back as exactly that double (Python's float() rounds
    correctly), in the fewest digits: the decimal of Python's repr, which is shortest."""
    texts = [fields[0] for fields in load_data_fields({"x": values})]
    back = np.array([float(text) for text in texts])
    assert np.array_equal(back.view(np.uint64), values.view(np.uint64))
    wider = [
        t for t, v in zip(texts, values.tolist(), strict=True) if Decimal(t) != Decimal(repr(v))
    ]
    assert not wider, wider[:5]


def test_floats_as_their_shortest_text_that_reads_back_exactly():
    edges = np.array(EDGE_DOUBLES)
    assert_shortest_exact(np.concatenate([random_doubles(300_000, seed=1), edges, -edges]))
    normal = np.random.default_rng(2).standard_normal(100_000) * 10.0 ** np.arange(-5, 5).repeat(
        10_000
    )
    assert_shortest_exact(normal)
    examples = np.array([1.5, -0.0, 100.0, 0.1, 1e22, 5e-324, 1e-7, 0.00001, np.nan])
    assert [f[0] for f in load_data_fields({"x": examples})] == [
        "1.5", "-0", "100", "0.1", "1e+22", "5e-324", "1e-7", "0.00001", "\\N",
    ]  # fmt: skip


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
@settings(max_examples=300, deadline=None)
def test_any_double_reads_back_exactly(values: list[float]):
    assert_shortest_exact(np.array(values, dtype=np.float64))


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1))
@settings(max_examples=100, deadline=None)
def test_a_float32_is_written_as_the_double_it_widens_to(values: list[float]):
    floats = np.array(values, dtype=np.float32)
    texts = [fields[0] for fields in load_data_fields({"x": floats})]
    back = np.array([float(text) for text in texts])
    assert np.array_equal(back.view(np.uint64), floats.astype(np.float64).view(np.uint64))


def test_integers_booleans_and_texts_as_load_data_fields():
    columns = {
        "i": np.array([0, -7, 2**63 - 1, -(2**63), 1000000000, -999999999]),
        "u": np.array([0, 7, 10, 2**63 - 1, 10**9, 999999999], dtype=np.uint64),
        "b": np.array([True, False, True, False, True, False]),
        "s": np.array(["a\tb", None, "\\", "", "x\ny\0", 'é"'], object),
    }
    assert load_data_fields(columns) == [
        ["0", "0", "1", "a\\tb"],
        ["-7", "7", "0", "\\N"],
        ["9223372036854775807", "10", "1", "\\\\"],
        ["-9223372036854775808", "9223372036854775807", "0", ""],
        ["1000000000", "1000000000", "1", "x\\ny\\0"],
        ["-999999999", "999999999", "0", 'é"'],
    ]


TRAIN = """
    SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
    TO TRAIN xgboost.gbtree
    WITH objective = "multi:softprob", max_depth = 3, train.num_boost_round = 3
    LABEL class INTO {model};
    SELECT * FROM iris_test TO PREDICT {table}.class USING {model};
"""


def _trained(url: str, name: str, capsys) -> tuple[str, str, list[tuple]]:
    """Train a model and predict iris_test into a table; the model, table and table rows."""
    model, table = f"{name}_model", f"{name}_pred"
    code = main(["-e", TRAIN.format(model=model, table=table), "--datasource", url])
    assert code == 0, capsys.readouterr().err
    return model, table, _rows(url, table)


def _rows(url: str, table: str) -> list[tuple]:
    ds = connect(url)
    try:
        return ds.execute(f"SELECT * FROM {table} ORDER BY id").rows
    finally:
        ds.close()


def _source_class(url: str) -> type:
    ds = connect(url)
    ds.close()
    return type(ds)


def _clean_up(url: str, model: str, table: str) -> list[str]:
    """Drop the model, the table and any staging table; the staging tables' names."""
    ds = connect(url)
    try:
        staging = [t for t in _tables(ds) if t.startswith(f"{table}__sqlml")]
        for name in [table, *staging]:
            ds.execute(f"DROP TABLE IF EXISTS {ds.quote([name])}")
        ModelStore(ds).drop(model)
        return staging
    finally:
        ds.close()


def _tables(ds) -> list[str]:
    if ds.dialect == "sqlite":
        return [r[0] for r in ds.execute("SELECT name FROM sqlite_master").rows]
    found = ds.execute(
        f"SELECT table_name FROM information_schema.tables WHERE table_schema = {ds.current_schema}"
    )
    return [r[0] for r in found.rows]


def test_a_predict_that_fails_half_way_leaves_the_old_table(iris_url, unique_name, capsys):
    model, table, old = _trained(iris_url, unique_name, capsys)
    datasource_class = _source_class(iris_url)
    real_insert = datasource_class._insert

    def half_then_fail(self, staging, columns):
        real_insert(self, staging, {k: v[: len(v) // 2] for k, v in columns.items()})
        raise DatasourceError("the connection was lost (injected)")

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(datasource_class, "_insert", half_then_fail)
            program = f"SELECT * FROM iris_train TO PREDICT {table}.class USING {model};"
            assert main(["-e", program, "--datasource", iris_url]) == 1
        assert "injected" in capsys.readouterr().err
        assert _rows(iris_url, table) == old
    finally:
        staging = _clean_up(iris_url, model, table)
    assert len(old) == 30
    assert staging == []  # the half-written staging table was dropped


CHILD = """
import sys, time
from sqlml.cli import main
from sqlml.datasources import bulk
from sqlml.datasources.duckdb import source as duckdb
from sqlml.datasources.postgresql import binary_write
from sqlml.datasources.sqlite import source as sqlite

url, table, model = sys.argv[1:4]
source_class = sqlite.SQLiteSource if url.startswith("sqlite") else duckdb.DuckDBSource
real_insert = source_class._insert

def pause():
    print("writing", flush=True)
    time.sleep(600)

def paused_stream(chunks):
    def stream(columns):
        for i, chunk in enumerate(chunks(columns)):
            if i == 3:
                pause()  # killed here, inside the LOAD DATA or COPY statement
            yield chunk
    return stream

def half_then_pause(self, staging, columns):
    real_insert(self, staging, {k: v[: len(v) // 2] for k, v in columns.items()})
    pause()

bulk.CHUNK_BYTES = 4096
bulk.text_chunks = paused_stream(bulk.text_chunks)
binary_write.binary_rows = paused_stream(binary_write.binary_rows)
if url.startswith(("duckdb", "sqlite")):
    source_class._insert = half_then_pause
main(["-e", f"SELECT * FROM big TO PREDICT {table}.class USING {model};", "--datasource", url])
"""


def test_a_predict_killed_half_way_leaves_the_old_table(iris_url, unique_name, capsys):
    model, table, old = _trained(iris_url, unique_name, capsys)
    ds = connect(iris_url)
    rng = np.random.default_rng(7)
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    big = {"id": np.arange(20_000)} | {n: rng.uniform(0, 8, 20_000) for n in names}
    ds.write_table(["big"], big)
    ds.close()  # a DuckDB file has one writer: the child
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), iris_url, table, model],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SQLML_CACHE": "off"},
    )
    try:
        line = child.stdout.readline()
        assert line == "writing\n", child.stderr.read() if child.poll() is not None else line
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
        assert _rows(iris_url, table) == old
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
        ds = connect(iris_url)
        ds.execute("DROP TABLE IF EXISTS big")
        ds.close()
        _clean_up(iris_url, model, table)


def test_predict_streams_batches_from_read_to_write(datasource, unique_name, monkeypatch, capsys):
    """TO PREDICT never holds the whole SELECT: it reads, scores and writes a batch at a
    time (each batch inserted as it comes); a column whose later batches hold NULLs or
    fractions is widened as the whole result would be typed."""
    url = datasource.url
    table, model, out = unique_name, f"{unique_name}_m", f"{unique_name}_out"
    n = 1000
    ids = np.arange(n)
    datasource.write_table(
        [table],
        {
            "id": ids,
            "x": (ids % 10).astype(np.float64),
            "late": np.where(ids < 900, ids, np.nan),  # integers, NULL only near the end
            "y": (ids % 10 >= 5).astype(np.int64),
        },
    )
    train = (
        f"SELECT x, y FROM {table} TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        f"train.num_boost_round = 5 LABEL y INTO {model};"
    )
    assert main(["-e", train, "--datasource", str(url)]) == 0, capsys.readouterr().err
    source = type(datasource)
    inserted: list[int] = []
    real_insert = source._insert

    def counting(self, staging, columns):
        inserted.append(len(next(iter(columns.values()))))
        return real_insert(self, staging, columns)

    def whole_read(self, select, reporter=None):
        raise AssertionError("TO PREDICT read the whole result at once")

    monkeypatch.setattr(source, "_insert", counting)
    monkeypatch.setattr(source, "read", whole_read)
    predict = (
        f"SELECT id, x, CASE WHEN late IS NULL THEN NULL ELSE id END AS late FROM {table} "
        "ORDER BY id "
        f"TO PREDICT {out}.y WITH predict.batch_size = 128 USING {model};"
    )
    try:
        assert main(["-e", predict, "--datasource", str(url)]) == 0, capsys.readouterr().err
        monkeypatch.undo()
        assert sum(inserted) == n and max(inserted) <= 128 and len(inserted) >= 8
        back = datasource.read(f"SELECT * FROM {out} ORDER BY id")
        assert back["id"].tolist() == ids.tolist()
        assert back["y"].tolist() == (ids % 10 >= 5).astype(int).tolist()  # all right
        late = back["late"]
        assert late.dtype == np.float64 and np.isnan(late[900:]).all()
        assert late[:900].tolist() == ids[:900].tolist()
    finally:
        monkeypatch.undo()
        for name in (table, out):
            datasource.execute(f"DROP TABLE IF EXISTS {datasource.quote([name])}")
        ModelStore(datasource).drop(model)
