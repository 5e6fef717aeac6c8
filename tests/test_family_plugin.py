"""A model family registered from outside sqlml trains, predicts, explains and exports
through the normal statements: a constant regressor predicting the mean label."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqlml import models
from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.models.attributes import schema
from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family, Trainer
from sqlml.semantics import analyze
from sqlml.semantics.attributes import Attr
from sqlml.semantics.estimators import find_estimator

X = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
Y = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])


class ConstantTrainer:
    """Learns the mean label, shrunk toward zero by ``model.shrink``; stores it as JSON. It
    trains on streamed batches too (``train.external_memory``)."""

    def train(self, context, features, y, labels, attributes, base=None, **ranking):
        mean = float(np.mean(y)) * (1 - attributes["model.shrink"])
        details = {"params": {}, "metrics": {"train_rows": float(len(y))}}
        return json.dumps({"mean": mean}).encode(), details

    def train_batches(self, context, batches, sample, sample_y, labels, attributes, base=None):
        y = np.concatenate([batch_y for _, batch_y in batches()])
        return self.train(context, sample, y, labels, attributes, base)

    def scorer(self, context, data, metadata):
        mean = json.loads(data)["mean"]
        return lambda features, batch_size: np.full(features.rows, mean)


class Constant(Family):
    name = "constant"
    format = "constant-json"
    extensions = (".json",)
    streams = True

    def estimators(self) -> tuple[Estimator, ...]:
        shrink = Attr("model.shrink", "float", 0.0, "shrink toward 0", minimum=0, maximum=1)
        doc = "predicts the mean label"
        return (Estimator("ConstantRegressor", self.name, "regressor", schema(shrink), doc),)

    def trainer(self) -> Trainer:
        return ConstantTrainer()

    def exporter(self, stored: Any) -> Callable[[Path], Any]:
        return lambda path: path.write_bytes(stored.data)


class Nameless(Family):
    """A plug-in author's mistake: no name."""

    format = "none"
    extensions = ()

    def estimators(self) -> tuple[Estimator, ...]:
        return ()

    def exporter(self, stored: Any) -> Callable[[Path], Any]:
        raise NotImplementedError


@pytest.fixture
def constant_family() -> Iterator[Family]:
    family = models.register(Constant())
    yield family
    models.unregister(family.name)


def run(url: str, program: str, capsys) -> list[dict[str, str]]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def test_a_registered_family_trains_predicts_explains_and_exports(
    constant_family, duckdb_url, tmp_path, capsys
):
    ds = connect(duckdb_url)
    ds.write_table(["points"], {"x": X, "y": Y}, replace=True)
    ds.close()
    run(
        duckdb_url,
        "SELECT x, y FROM points TO TRAIN ConstantRegressor WITH validation.split = 0 "
        "LABEL y INTO mean_model;",
        capsys,
    )
    run(duckdb_url, "SELECT x FROM points TO PREDICT predicted.y USING mean_model;", capsys)
    ds = connect(duckdb_url)
    predicted = ds.execute("SELECT y FROM predicted").rows
    ds.close()
    assert [row[0] for row in predicted] == pytest.approx([Y.mean()] * len(Y))

    explained = run(duckdb_url, "SELECT x, y FROM points TO EXPLAIN mean_model;", capsys)
    assert explained == [{"feature": "x", "importance": "0.0"}]

    file = tmp_path / "mean.json"
    assert main(["export", "mean_model", str(file), "--datasource", duckdb_url]) == 0
    assert json.loads(file.read_text()) == {"mean": pytest.approx(Y.mean())}
    metadata = json.loads(Path(f"{file}.sqlml.json").read_text())
    assert metadata["family"] == "constant" and metadata["estimator"] == "ConstantRegressor"


def test_a_family_that_streams_trains_on_batches(constant_family, duckdb_url, capsys, monkeypatch):
    """Three batches of two rows: the mean of them all, not of the two-row sample."""
    from sqlml.runtime import external_memory

    monkeypatch.setattr(external_memory, "BATCH_ROWS", 2)
    monkeypatch.setattr(external_memory, "SAMPLE_ROWS", 2)
    ds = connect(duckdb_url)
    ds.write_table(["points"], {"x": X, "y": Y}, replace=True)
    ds.close()
    run(
        duckdb_url,
        "SELECT x, y FROM points TO TRAIN ConstantRegressor WITH validation.split = 0, "
        "train.external_memory = true LABEL y INTO streamed;",
        capsys,
    )
    run(duckdb_url, "SELECT x FROM points TO PREDICT predicted.y USING streamed;", capsys)
    ds = connect(duckdb_url)
    predicted = ds.execute("SELECT y FROM predicted").rows
    ds.close()
    assert [row[0] for row in predicted] == pytest.approx([Y.mean()] * len(Y))


def test_a_family_that_does_not_stream_refuses_external_memory_at_check(
    constant_family, duckdb_url, capsys
):
    constant_family.streams = False  # type: ignore[misc]  # as a family that leaves it out
    program = (
        "SELECT x, y FROM no_such_table TO TRAIN ConstantRegressor\n"
        "WITH train.disk_cache = true LABEL y INTO m;"
    )
    assert main(["-e", program, "--datasource", duckdb_url]) == 1
    err = capsys.readouterr().err
    assert (
        "<-e>:2:6: error: ConstantRegressor (constant models) trains on rows in memory only, "
        "not on streamed batches (train.disk_cache)" in err
    )
    assert "hint: remove train.disk_cache" in err
    assert "no_such_table" not in err  # refused before the SELECT runs


def test_a_family_without_a_kubeflow_job_trains_in_process_only(constant_family, capsys):
    program = "SELECT x, y FROM points TO TRAIN ConstantRegressor WITH "
    with pytest.raises(CheckError, match="trains in one process") as raised:
        analyze(parse(program + "train.distributed = true LABEL y INTO m;"))
    assert (raised.value.line, raised.value.column) == (1, len(program) + 1)
    (statement,) = analyze(parse(program + "train.workers = 2 LABEL y INTO m;"))
    assert "train.workers is not applied" in capsys.readouterr().err
    assert "train.workers" not in statement.attributes
    assert "kubeflow.org" not in to_argo_yaml([statement], "p")  # the step's own pod


def test_unregistering_removes_the_estimators(constant_family):
    assert find_estimator("constantregressor") is not None
    models.unregister("constant")
    assert find_estimator("ConstantRegressor") is None
    models.register(constant_family)  # for the fixture's teardown
    with pytest.raises(ValueError, match="already registered"):
        models.register(Constant())
    with pytest.raises(ValueError, match="built-in"):
        models.unregister("xgboost")
    with pytest.raises(TypeError, match="Nameless sets no name"):
        models.register(Nameless())
