"""The model store: versions, chunking, atomic saves, integrity, on every database."""

from __future__ import annotations

import threading

import pytest

from sqlml.errors import DatasourceError, ModelError
from sqlml.runtime import model_store
from sqlml.runtime.datasource import Datasource, connect
from sqlml.runtime.model_store import ModelStore

# What a model's stored metadata holds (the store checks it as it reads it).
METADATA = {
    "estimator": "xgboost.gbtree",
    "family": "xgboost",
    "format": "xgboost-ubj",
    "attributes": {},
    "params": {"objective": "reg:squarederror"},
    "features": [{"kind": "numeric", "column": "x", "params": {"shape": 1}, "inputs": []}],
    "label": "y",
    "labels": {"task": "regressor", "classes": [], "kind": "f"},
    "metrics": {},
    "statement": "SELECT x, y FROM t TO TRAIN xgboost.gbtree LABEL y INTO m",
    "rows": 1,
    "trained_at": "2025-01-01T00:00:00+00:00",
    "sqlml_version": "0.1.0",
}


def meta(**extra) -> dict:
    return {**METADATA, **extra}


def test_versions_chunks_and_retention(datasource, unique_name, monkeypatch):
    monkeypatch.setattr(model_store, "CHUNK_BYTES", 1000)
    store = ModelStore(datasource)
    payloads = [bytes(range(256)) * (i + 3) for i in range(5)]  # 768 to 1792 bytes
    try:
        versions = [store.save(unique_name, meta(n=i), data) for i, data in enumerate(payloads)]
        latest = store.load(unique_name)
        listed = {name: (version, meta) for name, version, meta in store.list()}
        kept = datasource.execute(
            f"SELECT version FROM sqlml_model_versions WHERE name = {datasource.param} "
            "ORDER BY version",
            [unique_name],
        ).rows
    finally:
        store.drop(unique_name)
    assert versions == [1, 2, 3, 4, 5]
    assert (latest.version, latest.metadata, latest.data) == (5, meta(n=4), payloads[4])
    assert listed[unique_name] == (5, meta(n=4))
    assert [v for (v,) in kept] == [3, 4, 5]  # the newest KEEP_VERSIONS


def test_a_failed_save_leaves_the_previous_version(datasource, unique_name, monkeypatch):
    store = ModelStore(datasource)
    store.save(unique_name, meta(good=True), b"first model")
    original = datasource.execute
    calls = []

    def failing(sql, params=()):
        calls.append(sql)
        if sql.startswith("INSERT INTO") and "sqlml_model_versions" in sql:
            raise DatasourceError("connection lost while saving")
        return original(sql, params)

    monkeypatch.setattr(datasource, "execute", failing)
    with pytest.raises(DatasourceError):
        store.save(unique_name, meta(good=False), b"second model, never complete")
    monkeypatch.undo()
    try:
        stored = store.load(unique_name)
    finally:
        store.drop(unique_name)
    assert (stored.version, stored.metadata, stored.data) == (1, meta(good=True), b"first model")
    assert (
        sum("INSERT INTO" in sql and "sqlml_model_versions" in sql for sql in calls) == 3
    )  # retried


def test_missing_chunks_are_detected(datasource, unique_name):
    store = ModelStore(datasource)
    store.save(unique_name, METADATA, b"x" * 10)
    datasource.execute(
        f"DELETE FROM sqlml_model_chunks WHERE name = {datasource.param}", [unique_name]
    )
    with pytest.raises(ModelError, match="is incomplete"):
        store.load(unique_name)
    store.drop(unique_name)
    with pytest.raises(ModelError, match="does not exist"):
        store.load(unique_name)
    assert not store.drop(unique_name)


def test_first_saves_on_parallel_duckdb_connections(tmp_path):
    """The local executor's workers each have a connection: two first saves at once race to
    create the store's tables (a DuckDB catalog conflict), and both must still land."""
    for trial in range(5):
        url = f"duckdb:///{tmp_path / f'race{trial}.duckdb'}"
        connections = [connect(url), connect(url)]
        assert _save_at_once(connections) == []
        store = ModelStore(connections[0])
        assert [(m.name, m.data) for m in map(store.load, ("m0", "m1"))] == [
            ("m0", b"m0"),
            ("m1", b"m1"),
        ]
        for ds in connections:
            ds.close()


def _save_at_once(connections: list[Datasource]) -> list[DatasourceError]:
    """Save model ``m<i>`` through connection i, all at once; the errors raised."""
    barrier = threading.Barrier(len(connections))
    errors: list[DatasourceError] = []

    def save(ds: Datasource, name: str) -> None:
        barrier.wait()
        try:
            ModelStore(ds).save(name, meta(name=name), name.encode())
        except DatasourceError as error:
            errors.append(error)

    threads = [
        threading.Thread(target=save, args=(ds, f"m{i}")) for i, ds in enumerate(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
