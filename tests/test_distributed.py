"""TO TRAIN xgboost with train.workers: XGBoost's collective training by several processes,
locally and as an XGBoostJob's pods (the training operator's environment on loopback)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb

from sqlml import ir
from sqlml.datasources import Datasource, connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.models.store import ModelStore
from sqlml.runtime import workers
from sqlml.runtime.cancel import Cancelled, Token
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

ROWS = 3000


def _load(ds: Datasource, table: str, rows: int, seed: int) -> None:
    """``rows`` points whose class is the sign of x1 + x2 (5% flipped)."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=rows), rng.normal(size=rows)
    y = ((x1 + x2 > 0) ^ (rng.random(rows) < 0.05)).astype(np.int64)
    ds.write_table([table], {"x1": x1, "x2": x2, "y": y}, replace=True)


def _train(ds: Datasource, table: str, model: str, options: str, token: Token | None = None):
    text = (
        f"SELECT x1, x2, y FROM {ds.quote([table])} TO TRAIN xgboost.gbtree WITH "
        f"objective = 'binary:logistic', train.num_boost_round = 20{options} LABEL y INTO {model};"
    )
    (statement,) = analyze(parse(text), ds.dialect)
    return execute(statement, ds, token=token)


def _accuracy(ds: Datasource, model: str, test: dict[str, np.ndarray]) -> float:
    booster = xgb.Booster()
    booster.load_model(bytearray(ModelStore(ds).load(model).data))
    x = np.column_stack([test["x1"], test["x2"]]).astype(np.float32)
    return float(((booster.predict(xgb.DMatrix(x)) > 0.5) == test["y"]).mean())


def _same_accuracy(ds: Datasource, name: str) -> None:
    _load(ds, f"{name}_train", ROWS, 1)
    _load(ds, f"{name}_test", 1000, 2)
    every = ", validation.split = 0"  # both train on every row
    _train(ds, f"{name}_train", f"{name}_one", every)
    _train(ds, f"{name}_train", f"{name}_two", f"{every}, train.workers = 2")
    test = ds.read(f"SELECT x1, x2, y FROM {ds.quote([f'{name}_test'])}")
    alone, shared = _accuracy(ds, f"{name}_one", test), _accuracy(ds, f"{name}_two", test)
    assert alone > 0.85
    assert abs(alone - shared) <= 0.01
    validated = _train(ds, f"{name}_train", f"{name}_validated", ", train.workers = 2")
    assert "validated on" in validated.summary
    metadata = ModelStore(ds).load(f"{name}_validated").metadata
    validated = metadata["validation"]["rows"]
    assert metadata["rows"] + validated == ROWS  # every row read once, by one worker
    assert abs(validated - 0.2 * ROWS) < 0.02 * ROWS
    assert metadata["metrics"]["validation_accuracy"] > 0.85


def test_two_workers_train_as_well_as_one(datasource: Datasource, unique_name: str) -> None:
    """On every database: the SELECT staged once, each worker reading its part of it; the
    helper tables (DuckDB: Parquet files) dropped after."""
    before = _helpers(datasource)
    _same_accuracy(datasource, unique_name)
    assert _helpers(datasource) == before
    assert _children() == []


def _helpers(ds: Datasource) -> set[str]:
    """The helper tables and files of train.workers' parts there are."""
    listed = ds.execute(ds.columns_sql.format(schema=ds.current_schema))
    tables = {row[0] for row in listed.rows} if listed else set()
    files = {path.name for path in Path(tempfile.gettempdir()).glob("*.parquet")}
    return {name for name in tables | files if "__sqlml_parts_" in name}


def test_a_failing_worker_is_named_and_the_others_stopped(
    duckdb_url: str, unique_name: str
) -> None:
    ds = connect(duckdb_url)
    try:  # two distinct rows: each in one part, two of the workers have none
        y = np.arange(50) % 2
        ds.write_table([unique_name], {"x1": y * 1.0, "x2": y * 1.0, "y": y})
        before = _helpers(ds)
        with pytest.raises(ModelError, match=r"worker [0-3] of 4 got no rows") as raised:
            _train(ds, unique_name, "m", ", train.workers = 4")
        assert raised.value.hint == "lower train.workers"
        assert _helpers(ds) == before
    finally:
        ds.close()
    assert _children() == []


def test_a_cancelled_step_stops_its_workers(duckdb_url: str, unique_name: str) -> None:
    ds = connect(duckdb_url)
    token = Token()
    try:
        _load(ds, unique_name, 500, 1)

        def cancel_once_the_workers_run() -> None:
            deadline = time.monotonic() + 300  # a deadlock guard
            while not _child_pids() and time.monotonic() < deadline:
                time.sleep(0.01)
            token.cancel("a test")

        threading.Thread(target=cancel_once_the_workers_run, daemon=True).start()
        before = _helpers(ds)
        with pytest.raises(Cancelled):
            _train(ds, unique_name, "m", ", train.workers = 2", token)
        assert not ModelStore(ds).list()
        assert _helpers(ds) == before  # dropped by rank 0, or by the step after it
    finally:
        ds.close()
    assert _children() == []


def test_the_pods_of_an_xgboost_job_train_together(tmp_path: Path, unique_name: str) -> None:
    """Master (rank 0) and a worker as the training operator starts them: each process
    reads its part from the database and rank 0 stores the model."""
    url = f"sqlite:///{tmp_path / 'pods.db'}"
    ds = connect(url)
    _load(ds, unique_name, ROWS, 1)
    text = (
        f"SELECT x1, x2, y FROM {unique_name} TO TRAIN xgboost.gbtree "
        "WITH train.workers = 2, train.num_boost_round = 10 LABEL y INTO pod_model;"
    )
    (statement,) = analyze(parse(text), "sqlite")
    env = {
        **os.environ,
        "SQLML_DATASOURCE": url,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(workers.free_port()),
        "WORLD_SIZE": "2",
    }
    argument = ir.to_argument(statement.to_dict())
    pods = [
        subprocess.Popen(
            [sys.executable, "-m", "sqlml.runtime.step", argument],
            env={**env, "RANK": str(rank)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    errors = [pod.communicate(timeout=600)[1] for pod in pods]  # a deadlock guard
    assert [pod.returncode for pod in pods] == [0, 0], errors
    assert "trained pod_model (xgboost.gbtree) on" in errors[0]
    assert "worker 1 of 2 of pod_model done" in errors[1]
    stored = ModelStore(ds).load("pod_model")
    assert stored.metadata["rows"] + stored.metadata["validation"]["rows"] == ROWS
    ds.close()


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (", train.external_memory = true", "not on streamed batches"),
        (", objective = 'rank:pairwise'", "ranks every row as one query"),
        (", tree_method = 'exact'", "exact tree method trains in one process only"),
    ],
)
def test_what_workers_cannot_share_is_refused_at_check_time(options: str, problem: str) -> None:
    text = f"SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH train.workers = 2{options} "
    text += "LABEL y INTO m;"
    with pytest.raises(CheckError, match=problem) as raised:
        analyze(parse(text))
    assert raised.value.line == 1 and raised.value.column > 40


def test_continuing_a_model_is_refused_at_check_time() -> None:
    text = (
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH train.workers = 2 LABEL y USING a INTO m;"
    )
    with pytest.raises(CheckError, match="USING a trains in one process") as raised:
        analyze(parse(text))
    assert raised.value.column == text.index("a INTO") + 1


def _children() -> list[int]:
    """This process's child processes, once any being reaped have gone (300 s at most, a
    deadlock guard: they go at once, a busy machine reaps them later)."""
    deadline = time.monotonic() + 300
    while True:
        found = _child_pids()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _child_pids() -> list[int]:
    """This process's child processes now."""
    return [
        int(pid)
        for task in Path(f"/proc/{os.getpid()}/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]
