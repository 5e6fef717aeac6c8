"""A TO TRAIN INTO an existing model that fails, while training or while saving, leaves the
previous version in place: loadable, predicting, with no trace of the failed version."""

from __future__ import annotations

import pytest
import xgboost as xgb

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import CHUNKS, TABLE, ModelStore

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"


def train(model: str, rounds: int) -> str:
    return (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = {rounds} LABEL class INTO {model};"
    )


def run(url: str, program: str, capsys) -> tuple[int, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    return status, capsys.readouterr().err


@pytest.fixture
def model(iris_url, unique_name, capsys):
    """The iris datasource URL and a model trained there (version 1, 5 rounds)."""
    status, err = run(iris_url, train(unique_name, 5), capsys)
    assert status == 0, err
    yield iris_url, unique_name
    run(
        iris_url,
        f"DROP MODEL IF EXISTS {unique_name}; DROP TABLE IF EXISTS {unique_name}_p;",
        capsys,
    )


def assert_first_version_intact(url: str, model: str, capsys) -> None:
    """Version 1 is the model: it loads, predicts every test flower, and version 2 left no
    row behind."""
    ds = connect(url)
    try:
        stored = ModelStore(ds).load(model)
        assert stored.version == 1
        assert stored.metadata["attributes"]["train.num_boost_round"] == 5
        for table in (TABLE, CHUNKS):
            left = ds.execute(
                f"SELECT COUNT(*) FROM {table} WHERE name = {ds.param} AND version > 1", [model]
            )
            assert left.rows[0][0] == 0
    finally:
        ds.close()
    status, err = run(
        url, f"SELECT * FROM iris_test TO PREDICT {model}_p.class USING {model};", capsys
    )
    assert status == 0, err
    ds = connect(url)
    try:
        predicted = ds.execute(f"SELECT class FROM {model}_p")
    finally:
        ds.close()
    assert len(predicted.rows) == 30
    assert {row[0] for row in predicted.rows} <= {"setosa", "versicolor", "virginica"}


def test_a_fault_during_training_keeps_the_previous_version(model, monkeypatch, capsys):
    url, name = model
    rounds = []
    update = xgb.Booster.update

    def failing_update(self, *args, **kwargs):
        rounds.append(1)
        if len(rounds) == 3:  # part way through the boosting
            raise xgb.core.XGBoostError("injected fault: out of memory")
        return update(self, *args, **kwargs)

    monkeypatch.setattr(xgb.Booster, "update", failing_update)
    status, err = run(url, train(name, 20), capsys)
    assert status == 1
    assert "XGBoost: injected fault: out of memory" in err
    monkeypatch.undo()
    assert_first_version_intact(url, name, capsys)


def test_a_connection_lost_while_saving_keeps_the_previous_version(model, monkeypatch, capsys):
    """The connection drops after the new version's bytes are written, before its metadata
    row, in every attempt of the save: each open transaction is lost with it."""
    url, name = model
    ds = connect(url)
    source = type(ds)
    ds.close()
    execute = source.execute
    faults = []

    def dropping(self, sql, params=()):
        if sql.startswith(f"INSERT INTO {self.quote([TABLE])}"):
            faults.append(sql)
            self._con.close()  # the server's end: its transaction is rolled back
        return execute(self, sql, params)

    monkeypatch.setattr(source, "execute", dropping)
    status, err = run(url, train(name, 20), capsys)
    assert status == 1, err
    assert faults  # the fault struck while saving
    monkeypatch.undo()
    assert_first_version_intact(url, name, capsys)


def test_a_failed_save_retried_once_saves_the_new_version(model, monkeypatch, capsys):
    """A save failing once (a deadlock, say) is retried whole: version 2 is complete."""
    url, name = model
    ds = connect(url)
    source = type(ds)
    ds.close()
    execute = source.execute
    faults = []

    def failing_once(self, sql, params=()):
        if sql.startswith(f"INSERT INTO {self.quote([TABLE])}") and not faults:
            faults.append(sql)
            from sqlml.errors import DatasourceError

            raise DatasourceError("injected fault: deadlock found")
        return execute(self, sql, params)

    monkeypatch.setattr(source, "execute", failing_once)
    status, err = run(url, train(name, 20), capsys)
    assert status == 0, err
    monkeypatch.undo()
    ds = connect(url)
    try:
        stored = ModelStore(ds).load(name)
    finally:
        ds.close()
    assert stored.version == 2
    assert stored.metadata["attributes"]["train.num_boost_round"] == 20
    assert xgb.Booster(model_file=bytearray(stored.data)).num_boosted_rounds() == 20
