"""Reading in batches with bounded memory, and training from batches (external memory)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from sqlml.datasources.arrays import join_batches

ROWS = 1000


@pytest.fixture
def table(datasource, unique_name):
    rng = np.random.default_rng(1)
    score = rng.standard_normal(ROWS)
    score[::7] = np.nan  # NULLs
    datasource.write_table(
        [unique_name],
        {
            "id": np.arange(ROWS, dtype=np.int64),
            "score": score,
            "tag": np.array([None if i % 5 == 0 else f"t{i % 3}" for i in range(ROWS)], object),
        },
    )
    yield unique_name
    datasource.execute(f"DROP TABLE {unique_name}")


def test_batches_are_bounded_and_join_to_the_result(datasource, table):
    select = f"SELECT id, score, tag FROM {table} ORDER BY id"
    batches = list(datasource.read_batches(select, 300))
    assert [len(batch["id"]) for batch in batches] == [300, 300, 300, 100]
    joined = join_batches(batches)
    whole = datasource.read(select)
    assert list(joined) == list(whole) == ["id", "score", "tag"]
    assert joined["id"].tolist() == whole["id"].tolist() == list(range(ROWS))
    assert np.array_equal(joined["score"], whole["score"], equal_nan=True)
    assert np.isnan(joined["score"][::7]).all()
    assert joined["tag"].tolist() == whole["tag"].tolist()
    assert joined["tag"][0] is None and joined["tag"][1] == "t1"


def test_stopping_early_leaves_the_connection_usable(datasource, table):
    batches = datasource.read_batches(f"SELECT id FROM {table} ORDER BY id", 100)
    assert next(batches)["id"].tolist() == list(range(100))
    batches.close()
    found = datasource.execute(f"SELECT COUNT(*) FROM {table}")
    assert found.rows[0][0] == ROWS


def test_an_empty_result_is_one_batch_of_empty_columns(datasource, table):
    batches = list(datasource.read_batches(f"SELECT id, tag FROM {table} WHERE id < 0", 100))
    assert len(batches) == 1
    assert list(batches[0]) == ["id", "tag"]
    assert all(len(values) == 0 for values in batches[0].values())


# Training from batches -------------------------------------------------------------------------

TRAIN_ROWS, TEST_ROWS = 4000, 1000


def churn(rows: int, seed: int) -> dict[str, np.ndarray]:
    """Numbers, a text category and a text label that depends on both."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, 4))
    plan = rng.choice(["basic", "plus", "pro"], rows)
    score = x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + np.where(plan == "pro", 1.0, 0.0)
    churned = score + 0.3 * rng.standard_normal(rows) > 0.3
    columns = {f"x{i}": x[:, i] for i in range(4)}
    columns["plan"] = plan.astype(object)
    columns["churned"] = np.where(churned, "yes", "no").astype(object)
    return columns


@pytest.fixture
def churn_url(request, tmp_path, unique_name):
    """A datasource (DuckDB, MySQL) holding <name>_train and <name>_test."""
    from conftest import datasource_url

    from sqlml.datasources import connect

    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    ds.write_table([f"{unique_name}_train"], churn(TRAIN_ROWS, 1))
    ds.write_table([f"{unique_name}_test"], churn(TEST_ROWS, 2))
    ds.close()
    yield url
    ds = connect(url)
    for suffix in ("train", "test"):
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}_{suffix}")
    ds.close()


def trained(url: str, statement: str, model: str) -> dict:
    from sqlml.cli import main
    from sqlml.datasources import connect
    from sqlml.models.store import ModelStore

    assert main(["-e", statement, "--datasource", url]) == 0
    ds = connect(url)
    try:
        metadata = ModelStore(ds).load(model).metadata
        ModelStore(ds).drop(model)
    finally:
        ds.close()
    return metadata


@pytest.mark.parametrize("churn_url", ["duckdb", "mysql"], indirect=True)
@pytest.mark.parametrize("estimator", ["xgboost.gbtree", "xgboost.gblinear"])
def test_external_memory_xgboost_matches_in_memory(churn_url, unique_name, estimator, monkeypatch):
    from sqlml.runtime import external_memory

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 500)  # 8 batches
    monkeypatch.setattr(external_memory, "SAMPLE_ROWS", 1000)  # features from 2 of them
    more = "updater = 'coord_descent', " if estimator == "xgboost.gblinear" else ""
    accuracy = {}
    for mode in ("false", "true"):
        model = f"{unique_name}_{mode}"
        statement = (
            f"SELECT * FROM {unique_name}_train TO TRAIN {estimator} "
            f"WITH train.num_boost_round = 30, train.external_memory = {mode}, {more}"
            f"validation.select = 'SELECT * FROM {unique_name}_test' "
            f"LABEL churned INTO {model};"
        )
        metadata = trained(churn_url, statement, model)
        assert metadata["rows"] == TRAIN_ROWS
        assert metadata["labels"]["classes"] == ["no", "yes"]
        assert metadata["validation"]["rows"] == TEST_ROWS
        plan = next(f for f in metadata["features"] if f["column"] == "plan")
        assert plan["params"]["vocabulary"] == ["basic", "plus", "pro"]
        accuracy[mode] = metadata["metrics"]["validation_accuracy"]
    assert accuracy["false"] > 0.85
    assert abs(accuracy["true"] - accuracy["false"]) <= 0.02


@pytest.mark.keras
@pytest.mark.parametrize("churn_url", ["duckdb"], indirect=True)
def test_external_memory_keras_matches_in_memory(churn_url, unique_name, monkeypatch):
    from sqlml.runtime import external_memory

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 500)
    monkeypatch.setattr(external_memory, "SAMPLE_ROWS", 1000)
    accuracy = {}
    for mode in ("false", "true"):
        model = f"{unique_name}_{mode}"
        statement = (
            f"SELECT * FROM {unique_name}_train TO TRAIN DNNClassifier "
            f"WITH model.hidden_units = [16], train.epoch = 8, train.batch_size = 64, "
            f"train.external_memory = {mode}, "
            f"validation.select = 'SELECT * FROM {unique_name}_test' "
            f"LABEL churned INTO {model};"
        )
        metadata = trained(churn_url, statement, model)
        assert metadata["rows"] == TRAIN_ROWS
        assert "train_accuracy" in metadata["metrics"]
        accuracy[mode] = metadata["metrics"]["validation_accuracy"]
    assert accuracy["false"] > 0.85
    assert abs(accuracy["true"] - accuracy["false"]) <= 0.03


def test_external_memory_refuses_what_cannot_stream(iris_duckdb_url, capsys):
    from sqlml.cli import main

    gblinear = (
        "SELECT * FROM iris_train TO TRAIN xgboost.gblinear WITH train.external_memory = true "
        "LABEL class INTO m;"
    )
    assert main(["-e", gblinear, "--datasource", iris_duckdb_url]) == 1
    err = capsys.readouterr().err
    assert "shotgun updater learns from the first batch" in err
    assert "updater = 'coord_descent'" in err
    ranker = (
        "SELECT * FROM iris_train TO TRAIN XGBRegressor WITH objective = 'rank:pairwise', "
        "train.group_column = 'class', train.external_memory = true LABEL id INTO m;"
    )
    assert main(["-e", ranker, "--datasource", iris_duckdb_url]) == 1
    assert "cannot train rankers" in capsys.readouterr().err


@pytest.mark.parametrize("churn_url", ["duckdb"], indirect=True)
def test_external_memory_never_reads_the_select_whole(churn_url, unique_name, monkeypatch):
    """Only batches are read (and the distinct labels); validation.split holds out a seeded
    fifth of each batch's rows."""
    from sqlml.datasources.duckdb.source import DuckDBSource
    from sqlml.runtime import external_memory

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 500)
    whole_reads: list[str] = []
    read = DuckDBSource.read

    def recording(self, select, reporter=None):
        whole_reads.append(select)
        return read(self, select, reporter)

    monkeypatch.setattr(DuckDBSource, "read", recording)
    statement = (
        f"SELECT * FROM {unique_name}_train TO TRAIN xgboost.gbtree "
        f"WITH train.external_memory = true LABEL churned INTO {unique_name};"
    )
    first = trained(churn_url, statement, unique_name)
    assert whole_reads and all(s.startswith("SELECT DISTINCT") for s in whole_reads)
    held = first["validation"]["rows"]
    assert first["validation"]["split"] == 0.2
    assert first["rows"] + held == TRAIN_ROWS
    assert 0.17 * TRAIN_ROWS < held < 0.23 * TRAIN_ROWS
    assert first["metrics"]["validation_accuracy"] > 0.85
    again = trained(churn_url, statement, unique_name)
    assert again["validation"] == first["validation"]
    assert again["metrics"] == first["metrics"]


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The SELECTs DuckDB's read_batches is asked for, in order."""
    from sqlml.datasources.duckdb.source import DuckDBSource

    asked: list[str] = []
    read_batches = DuckDBSource.read_batches

    def recording(self, select, batch_rows):
        asked.append(select)
        return read_batches(self, select, batch_rows)

    monkeypatch.setattr(DuckDBSource, "read_batches", recording)
    return asked


@pytest.mark.parametrize("churn_url", ["duckdb"], indirect=True)
def test_xgboost_reads_the_select_once_and_its_later_passes_from_disk(
    churn_url, unique_name, monkeypatch, reads
):
    """XGBoost's passes after the first read the pages it kept on disk: the training SELECT
    runs once (and once more, limited, for the sample); the trees are those of a training
    that reads the SELECT every pass (no room on disk for the pages)."""
    from sqlml.runtime import external_memory, spool

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 500)  # 8 pages
    select = f"SELECT * FROM {unique_name}_train"
    statement = (
        f"{select} TO TRAIN xgboost.gbtree WITH train.num_boost_round = 10, "
        f"train.external_memory = true, validation.split = 0 LABEL churned INTO {unique_name};"
    )
    spooled = trained(churn_url, statement, unique_name)
    assert reads.count(select) == 1
    assert [s for s in reads if s != select] == [
        f"SELECT * FROM ({select}\n) AS sqlml_rows LIMIT {external_memory.SAMPLE_ROWS}"
    ]
    reads.clear()
    monkeypatch.setattr(spool, "RESERVE", 1 << 62)  # more than any disk has free
    unspooled = trained(churn_url, statement, unique_name)
    assert reads.count(select) >= 3  # XGBoost's shape, sketch and pages
    assert spooled["rows"] == unspooled["rows"] == TRAIN_ROWS
    assert spooled["metrics"] == unspooled["metrics"]
    assert spooled["metrics"]["train_logloss"] < 0.2


@pytest.mark.keras
@pytest.mark.parametrize("churn_url", ["duckdb"], indirect=True)
def test_keras_reads_the_select_in_its_first_epoch_only(churn_url, unique_name, monkeypatch, reads):
    from sqlml.runtime import external_memory

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 500)
    select = f"SELECT * FROM {unique_name}_train"
    statement = (
        f"{select} TO TRAIN DNNClassifier WITH model.hidden_units = [16], train.epoch = 4, "
        "train.batch_size = 64, train.external_memory = true, validation.split = 0 "
        f"LABEL churned INTO {unique_name};"
    )
    metadata = trained(churn_url, statement, unique_name)
    assert reads.count(select) == 1
    assert metadata["rows"] == TRAIN_ROWS
    assert metadata["metrics"]["train_accuracy"] > 0.85


def test_a_spooled_pass_stopped_early_is_not_replayed(tmp_path):
    from sqlml.runtime.spool import Spool

    pages = [
        ({"x": np.full((2, 3), i, np.float32), "ids": np.array([[i], [-i]])}, np.array([i, i]))
        for i in range(3)
    ]
    spool = Spool(tmp_path / "pages")
    stopped = spool.passed(iter(pages))
    next(stopped)
    stopped.close()
    assert not spool.complete
    assert len(list(spool.passed(iter(pages)))) == 3
    assert spool.complete
    replayed = list(spool.passed(iter(())))  # the SELECT is not read again
    for (arrays, y), (expected, expected_y) in zip(replayed, pages, strict=True):
        assert arrays.keys() == expected.keys()
        assert all(arrays[k].tolist() == expected[k].tolist() for k in arrays)
        assert y.tolist() == expected_y.tolist()
    assert replayed[0][0]["x"].dtype == np.float32


def test_a_spool_whose_write_fails_gives_up_and_passes_every_page(tmp_path, monkeypatch):
    from sqlml.runtime import spool as spooling

    def full(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    pages = [({"x": np.full((2, 3), i, np.float32)}, np.array([i, i])) for i in range(3)]
    spool = spooling.Spool(tmp_path / "pages")
    written = spool.passed(iter(pages))
    assert next(written)[1].tolist() == [0, 0]  # the first page is on disk
    monkeypatch.setattr(spooling.np, "savez", full)
    assert [y.tolist() for _, y in written] == [[1, 1], [2, 2]]
    assert not spool.complete and not (tmp_path / "pages").exists()
    assert len(list(spool.passed(iter(pages)))) == 3  # later passes read the SELECT
    assert not spool.complete


def test_a_spool_of_python_objects_is_not_written(tmp_path):
    from sqlml.runtime.spool import Spool

    pages = [({"words": np.array(["a", None], dtype=object)}, np.array([1, 0]))]
    spool = Spool(tmp_path / "pages")
    assert len(list(spool.passed(iter(pages)))) == 1
    assert not spool.complete and not (tmp_path / "pages").exists()


def test_batches_are_regrouped_into_pages_of_the_rows_asked():
    from sqlml.runtime.external_memory import regrouped

    sizes = [(0, 3), (3, 5), (8, 1), (9, 4)]
    batches = [{"a": np.arange(start, start + n), "b": np.arange(n) * 0.5} for start, n in sizes]
    pages = list(regrouped(iter(batches), 4))
    assert [page["a"].tolist() for page in pages] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9, 10, 11],
        [12],
    ]
    assert [len(page["b"]) for page in pages] == [4, 4, 4, 1]
    assert [len(page["a"]) for page in regrouped(iter([{"a": np.arange(0)}]), 4)] == [0]


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_xgboost_loads_with_openmp_threads_that_sleep(given, expected):
    """XGBoost's libgomp reads OMP_WAIT_POLICY once, when it loads: it must find PASSIVE
    (external memory's per-page parallel loops spun for 2 to 3 times the CPU under load),
    unless the user chose."""
    probe = (
        "import os, sys\n"
        "seen = []\n"
        "class Probe:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'xgboost':\n"
        "            seen.append(os.environ.get('OMP_WAIT_POLICY'))\n"
        "sys.meta_path.insert(0, Probe())\n"
        "import sqlml.models.xgboost.model\n"
        "print(seen[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    found = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == expected
