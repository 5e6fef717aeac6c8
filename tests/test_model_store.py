"""The model store: versions, chunking, atomic saves, integrity, on every database."""

from __future__ import annotations

import json
import threading

import pytest
from conftest import KINDS, datasource_url

from sqlml.cli import main
from sqlml.datasources import Datasource, connect
from sqlml.errors import DatasourceError, ModelError
from sqlml.models import store as model_store
from sqlml.models.store import ModelStore

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


@pytest.fixture(autouse=True)
def any_bytes(monkeypatch):
    """These tests store bytes that are no model: the families' checks of a model's bytes,
    which loading runs, are tested with real models (tests/test_model_tampering_trees.py)."""
    monkeypatch.setattr(model_store, "_check_data", lambda *args: None)


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
    monkeypatch.undo()  # undoes any_bytes too
    try:
        stored = store.load(unique_name, check=False)
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


# Model names compare exactly: case, accents and trailing spaces make other models.
VARIANTS = ("Churn", "churn", "modèle", "modele", "modele ")


def test_model_names_compare_exactly(datasource, unique_name):
    store = ModelStore(datasource)
    names = [f"{unique_name}_{variant}" for variant in VARIANTS]
    try:
        versions = [store.save(name, meta(), name.encode()) for name in names]
        loaded = [store.load(name).data for name in names]
        listed = {n: v for n, v, _ in store.list() if n.startswith(unique_name)}
        dropped = store.drop(names[0])
        left = sorted(n for n, _, _ in store.list() if n.startswith(unique_name))
    finally:
        for name in names:
            store.drop(name)
    assert versions == [1] * len(names)
    assert loaded == [name.encode() for name in names]
    assert listed == dict.fromkeys(names, 1)
    assert dropped and left == sorted(names[1:])


@pytest.fixture(params=KINDS)
def named_url(request, tmp_path, unique_name):
    """A database of each kind with table ``<u>_d`` (x: 0 to 19); its tables and models
    starting with ``<u>`` are dropped afterwards."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    ds.execute(f"CREATE TABLE {unique_name}_d (x INTEGER)")
    ds.execute(f"INSERT INTO {unique_name}_d VALUES {', '.join(f'({i})' for i in range(20))}")
    ds.close()
    yield url
    ds = connect(url)
    store = ModelStore(ds)
    for name, _, _ in store.list():
        if name.startswith(unique_name):
            store.drop(name)
    for i in range(len(VARIANTS)):
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}_p{i}")
    ds.execute(f"DROP TABLE {unique_name}_d")
    ds.close()


def test_statements_keep_models_named_alike_apart(named_url, unique_name, capsys):
    """TO TRAIN, TO PREDICT, SHOW MODELS and DROP MODEL on models whose names differ only in
    case, an accent or a trailing space: model i predicts i, on every database."""
    u, names = unique_name, [f'"{unique_name}_{variant}"' for variant in VARIANTS]
    train = (
        "SELECT x, {i} AS r FROM {u}_d TO TRAIN xgboost.gbtree WITH objective = "
        "'reg:squarederror', train.num_boost_round = 2, validation.split = 0.0 LABEL r INTO {m};"
    )
    program = "".join(train.format(i=i, u=u, m=m) for i, m in enumerate(names))
    program += "".join(
        f"SELECT x FROM {u}_d TO PREDICT {u}_p{i}.r USING {m};" for i, m in enumerate(names)
    )
    assert main(["-e", program, "--datasource", named_url]) == 0, capsys.readouterr()
    ds = connect(named_url)
    predicted = [
        {round(r) for (r,) in ds.execute(f"SELECT r FROM {u}_p{i}").rows} for i in range(len(names))
    ]
    ds.close()
    assert predicted == [{i} for i in range(len(names))]

    capsys.readouterr()
    drop = f"DROP MODEL {names[0]}; SHOW MODELS;"
    assert main(["-e", drop, "--datasource", named_url, "--format", "json"]) == 0
    shown = capsys.readouterr().out
    rows = json.loads(shown[shown.index("[") : shown.rindex("]") + 1])
    listed = {row["model"]: row["version"] for row in rows if row["model"].startswith(u)}
    assert listed == {f"{u}_{variant}": 1 for variant in VARIANTS[1:]}


def test_an_old_mysql_store_is_migrated_to_exact_names(mysql_url, unique_name):
    """A store made with VARCHAR names (case- and accent-insensitive) is altered when first
    opened: its rows stay, and names that the old collation merged become models apart."""
    database = f"sqlml_{unique_name}"
    root = connect(mysql_url)
    root.execute(f"CREATE DATABASE {database}")
    url = f"{mysql_url.rsplit('/', 1)[0]}/{database}"
    try:
        ds = connect(url)
        key, text, blob = (ds.types[kind] for kind in ("key", "text", "blob"))
        ds.execute(
            f"CREATE TABLE sqlml_model_versions (name {key} NOT NULL, version INTEGER NOT NULL, "
            f"size BIGINT NOT NULL, metadata {text} NOT NULL, PRIMARY KEY (name, version))"
        )
        ds.execute(
            f"CREATE TABLE sqlml_model_chunks (name {key} NOT NULL, version INTEGER NOT NULL, "
            f"seq INTEGER NOT NULL, chunk {blob} NOT NULL, PRIMARY KEY (name, version, seq))"
        )
        for version, name in ((1, "churn"), (2, "Churn")):  # INTO churn, then INTO "Churn"
            ds.execute(
                "INSERT INTO sqlml_model_versions VALUES (%s, %s, 3, %s)",
                [name, version, json.dumps(meta())],
            )
            ds.execute(
                "INSERT INTO sqlml_model_chunks VALUES (%s, %s, 0, %s)",
                [name, version, name[:3].encode()],
            )
        merged = ds.execute("SELECT COUNT(*) FROM sqlml_model_versions WHERE name = 'CHURN'")
        assert merged.rows == [(2,)]  # the old column: one model
        ds.close()

        ds = connect(url)
        store = ModelStore(ds)
        listed = {name: version for name, version, _ in store.list()}
        loaded = {name: store.load(name).data for name in listed}
        saved = store.save("CHURN", meta(), b"new")
        types = [
            ds.column_types([table])[0][:2] for table in (model_store.TABLE, "sqlml_model_chunks")
        ]
        ds.close()
    finally:
        root.execute(f"DROP DATABASE {database}")
        root.close()
    assert listed == {"Churn": 2, "churn": 1}
    assert loaded == {"Churn": b"Chu", "churn": b"chu"}
    assert saved == 1
    assert types == [("name", "varchar")] * 2


def test_mysql_model_names_are_read_as_text(mysql_url, unique_name, capsys):
    """A store of VARBINARY names (read as bytes: b'km' in JSON) is altered to text that
    compares exactly: every reader, a user's SELECT too, gets the names as text, and names
    alike stay apart."""
    database = f"sqlml_{unique_name}"
    root = connect(mysql_url)
    root.execute(f"CREATE DATABASE {database}")
    url = f"{mysql_url.rsplit('/', 1)[0]}/{database}"
    try:
        ds = connect(url)
        for table in (model_store.TABLE, "sqlml_model_chunks"):
            chunk = ", seq INTEGER NOT NULL, chunk LONGBLOB NOT NULL" if "chunks" in table else ""
            ds.execute(
                f"CREATE TABLE {table} (name VARBINARY(1020) NOT NULL, version INTEGER NOT NULL"
                + (chunk or ", size BIGINT NOT NULL, metadata LONGTEXT NOT NULL")
                + (
                    ", PRIMARY KEY (name, version, seq))"
                    if chunk
                    else ", PRIMARY KEY (name, version))"
                )
            )
        ds.close()
        ds = connect(url)
        store = ModelStore(ds)
        for name in VARIANTS:
            store.save(name, meta(), name.encode())
        loaded = {name: store.load(name).data for name in VARIANTS}
        ds.close()
        query = f"SELECT name FROM {model_store.TABLE} ORDER BY version, name"
        assert main(["-e", query, "--datasource", url, "--format", "json"]) == 0
        shown = capsys.readouterr().out
    finally:
        root.execute(f"DROP DATABASE {database}")
        root.close()
    assert loaded == {name: name.encode() for name in VARIANTS}
    names = [row["name"] for row in json.loads(shown[shown.index("[") : shown.rindex("]") + 1])]
    assert sorted(names) == sorted(VARIANTS)
