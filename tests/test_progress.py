"""Progress of reading, training and predicting: what the runtime reports, and where the
terminal display appears (a terminal) or not (a pipe)."""

from __future__ import annotations

import io
from collections.abc import Mapping

import pytest

from sqlml.cli import main
from sqlml.grammar import parse
from sqlml.runtime import progress
from sqlml.runtime.datasource import connect
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
TRAIN = (
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH train.num_boost_round = 7 LABEL class INTO m;"
)


class Recorder:
    """A sink that keeps every stage: [description, total, unit, units done, last metrics]."""

    def __init__(self) -> None:
        self.stages: list[list] = []

    def bar(self, description: str, total: int | None, unit: str) -> progress.Bar:
        stage = [description, total, unit, 0, {}]
        self.stages.append(stage)
        return _RecordedBar(stage)


class _RecordedBar:
    def __init__(self, stage: list) -> None:
        self.stage = stage

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        self.stage[3] += advance
        self.stage[4] = dict(metrics) or self.stage[4]

    def close(self) -> None:
        self.stage.append("closed")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(program: str, url: str) -> list[list]:
    """Run ``program``'s statements in order while recording their progress."""
    recorder = Recorder()
    source = connect(url)
    try:
        for statement in analyze(parse(program)):
            execute(statement, source, sink=recorder)
    finally:
        source.close()
    return recorder.stages


def test_reading_training_and_predicting_are_reported(iris_duckdb_url, monkeypatch):
    monkeypatch.setattr(progress, "METRICS_EVERY", 0.0)  # a metric after every round
    stages = run(TRAIN + "SELECT * FROM iris_test TO PREDICT p.class USING m;", iris_duckdb_url)
    described = [stage[:4] for stage in stages]
    assert described == [
        ["reading", None, "rows", 120],
        ["training", 7, "rounds", 7],
        ["predicting", None, "rows", 30],  # read, scored and written batch by batch
    ]
    assert set(stages[1][4]) == {"train_mlogloss"}
    assert all(stage[-1] == "closed" for stage in stages)


def test_without_a_sink_nothing_is_recorded_and_no_metric_is_computed():
    reporter = progress.Progress()
    assert not reporter.shown() and not reporter.metrics_due()
    with reporter.stage("training", 3, "rounds"):
        reporter.advance(1, loss=0.5)  # goes nowhere
        assert not reporter.shown()


@pytest.mark.keras
def test_keras_epochs_report_their_loss(iris_duckdb_url):
    stages = run(
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = 3 LABEL class INTO k;",
        iris_duckdb_url,
    )
    (training,) = [stage for stage in stages if stage[0] == "training"]
    assert training[1:4] == [3, "epochs", 3]
    assert {"loss", "accuracy"} <= set(training[4])


def test_a_terminal_shows_the_bars(iris_duckdb_url, monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["-e", TRAIN, "--datasource", iris_duckdb_url]) == 0
    shown = terminal.getvalue()
    assert "training" in shown and "7/7" in shown and "rounds" in shown
    assert "trained m (xgboost.gbtree)" in shown


def test_a_pipe_gets_the_summary_alone(iris_duckdb_url, monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    assert main(["-e", TRAIN, "--datasource", iris_duckdb_url]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("trained m (xgboost.gbtree) on 96 rows") and err.count("\n") == 1


def test_ci_gets_no_bars_even_on_a_terminal(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert progress.terminal(FakeTerminal()) is None
    monkeypatch.delenv("CI")
    assert progress.terminal(FakeTerminal()) is not None
    assert progress.terminal(io.StringIO()) is None
