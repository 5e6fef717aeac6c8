"""Progress of reading, training, predicting, evaluating and explaining: what the runtime
reports, and where the command line shows it (bars on a terminal, lines in a pipe when
SQLML_PROGRESS asks, else nothing)."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping

import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.models.store import ModelStore
from sqlml.models.xgboost import model as xgboost_model
from sqlml.runtime import progress, shapley
from sqlml.runtime.cancel import Cancelled, Token
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
TRAIN = (
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH train.num_boost_round = 7 LABEL class INTO m;"
)
TEST_ROWS = f"SELECT {MEASURES}, class FROM iris_test"


class Recorder:
    """A sink that keeps every stage: [description, total, unit, units done, last metrics,
    updates] (then "closed"); the description without the statement's subject ("training",
    not "training (m)")."""

    def __init__(self) -> None:
        self.stages: list[list] = []

    def bar(self, description: str, total: int | None, unit: str) -> progress.Bar:
        stage = [description.partition(" (")[0], total, unit, 0, {}, 0]
        self.stages.append(stage)
        return _RecordedBar(stage)


class _RecordedBar:
    def __init__(self, stage: list) -> None:
        self.stage = stage

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        self.stage[3] += advance
        self.stage[4] = dict(metrics) or self.stage[4]
        self.stage[5] += 1

    def close(self) -> None:
        self.stage.append("closed")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(program: str, url: str) -> list[list]:
    """Run ``program``'s statements in order while recording their progress."""
    return run_with_summaries(program, url)[0]


def run_with_summaries(program: str, url: str) -> tuple[list[list], list[str | None]]:
    """The recorded stages of ``program``'s statements, and their summaries."""
    recorder = Recorder()
    source = connect(url)
    try:
        summaries = [
            execute(statement, source, sink=recorder).summary
            for statement in analyze(parse(program))
        ]
    finally:
        source.close()
    return recorder.stages, summaries


def stored_metrics(url: str, model: str) -> dict[str, float]:
    source = connect(url)
    try:
        return ModelStore(source).load(model).metadata["metrics"]
    finally:
        source.close()


def test_reading_training_and_predicting_are_reported(iris_duckdb_url, monkeypatch):
    monkeypatch.setattr(progress, "METRICS_EVERY", 0.0)  # a metric after every round
    stages = run(TRAIN + "SELECT * FROM iris_test TO PREDICT p.class USING m;", iris_duckdb_url)
    described = [stage[:4] for stage in stages]
    assert described == [
        ["reading", None, "rows", 120],
        ["training", 7, "rounds", 7],
        ["validating", None, "rows", 24],  # the held-out rows, scored
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
def test_keras_epochs_report_their_loss_and_end_with_the_stored_metrics(iris_duckdb_url):
    stages, summaries = run_with_summaries(
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = 3 LABEL class INTO k;",
        iris_duckdb_url,
    )
    (training,) = [stage for stage in stages if stage[0] == "training"]
    assert training[1:4] == [3, "epochs", 3] and training[5] == 3  # an update an epoch
    final = training[4]
    assert set(final) == {"train_loss", "train_accuracy"}  # named as the summary names them
    stored = stored_metrics(iris_duckdb_url, "k")
    assert final == {name: stored[name] for name in final}
    assert progress.format_metrics(final) in summaries[0]


def test_the_training_bar_ends_with_the_final_metrics_not_a_stale_one(iris_duckdb_url, monkeypatch):
    monkeypatch.setattr(progress, "METRICS_EVERY", 1e12)  # no metric is ever due
    stages, summaries = run_with_summaries(TRAIN, iris_duckdb_url)
    (training,) = [stage for stage in stages if stage[0] == "training"]
    final = training[4]
    assert set(final) == {"train_mlogloss"}  # given with the last round all the same
    assert final == {"train_mlogloss": stored_metrics(iris_duckdb_url, "m")["train_mlogloss"]}
    assert f": {progress.format_metrics(final)}, validation_" in summaries[0]


def test_tree_explainer_reports_batches_of_rows(iris_duckdb_url, monkeypatch):
    monkeypatch.setattr(xgboost_model, "CONTRIBUTION_BATCH", 8)
    stages = run(TRAIN + f"{TEST_ROWS} TO EXPLAIN m USING TreeExplainer;", iris_duckdb_url)
    explained = [stage[:6] for stage in stages[3:]]
    assert explained == [
        ["reading", None, "rows", 30, {}, 1],
        ["explaining", 30, "rows", 30, {}, 4],  # 8 + 8 + 8 + 6 rows
    ]
    assert all(stage[-1] == "closed" for stage in stages)


class CancellingRecorder(Recorder):
    """A recorder that cancels ``token`` once an "explaining" stage has advanced."""

    def __init__(self, token: Token) -> None:
        super().__init__()
        self.token = token

    def bar(self, description: str, total: int | None, unit: str) -> progress.Bar:
        bar = super().bar(description, total, unit)
        if description == "explaining":
            record = bar.update

            def update(advance: int, metrics: Mapping[str, float]) -> None:
                record(advance, metrics)
                self.token.cancel("cancelled by the test")

            bar.update = update  # type: ignore[method-assign]
        return bar


def test_tree_explainer_stops_between_its_batches_when_cancelled(iris_duckdb_url, monkeypatch):
    monkeypatch.setattr(xgboost_model, "CONTRIBUTION_BATCH", 8)
    run(TRAIN, iris_duckdb_url)
    recorder = CancellingRecorder(Token())
    source = connect(iris_duckdb_url)
    try:
        (statement,) = analyze(parse(f"{TEST_ROWS} TO EXPLAIN m USING TreeExplainer;"))
        with pytest.raises(Cancelled):
            execute(statement, source, token=recorder.token, sink=recorder)
    finally:
        source.close()
    assert recorder.stages[-1][:4] == ["explaining", 30, "rows", 8]  # one batch, then stopped


def test_shapley_explainer_reports_its_chunks_of_rows_not_the_mixed_rows_scored(
    iris_duckdb_url, monkeypatch
):
    # 10 orders x 5 steps x 20 background rows = 1,000 mixed rows per row: 10 rows a chunk
    monkeypatch.setattr(shapley, "CHUNK", 10_000)
    stages = run(TRAIN + f"{TEST_ROWS} TO EXPLAIN m USING ShapleyExplainer;", iris_duckdb_url)
    assert [stage[:6] for stage in stages[4:]] == [["explaining", 30, "rows", 30, {}, 3]]


def test_permutation_explainer_reports_the_scoring_then_each_feature(iris_duckdb_url):
    program = TRAIN + f"{TEST_ROWS} TO EXPLAIN m USING PermutationExplainer;"
    stages = run(program, iris_duckdb_url)
    assert [stage[:6] for stage in stages[4:]] == [
        ["scoring", 30, "rows", 30, {}, 1],  # the rows as they are
        ["explaining", 4, "features", 4, {}, 4],  # a feature shuffled at a time
    ]


def test_evaluate_reports_reading_scoring_and_each_metric(iris_duckdb_url, tmp_path):
    plot = tmp_path / "m.png"
    program = TRAIN + (
        f"{TEST_ROWS} TO EVALUATE m WITH validation.metrics = 'accuracy,f1,log_loss', "
        f"evaluate.plot = '{plot}' LABEL class INTO e;"
    )
    stages, summaries = run_with_summaries(program, iris_duckdb_url)
    assert [stage[:4] for stage in stages[3:]] == [
        ["reading", None, "rows", 30],
        ["scoring", 30, "rows", 30],
        ["computing metrics", 3, "metrics", 3],
        ["plotting", 1, "plots", 1],
    ]
    assert stages[5][5] == 3 and plot.exists()
    assert summaries[1].startswith("evaluated m on 30 rows: accuracy ")


def test_a_terminal_shows_the_bars(iris_duckdb_url, monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    monkeypatch.setattr(progress, "METRICS_EVERY", 1e12)  # the final metric only
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["-e", TRAIN, "--datasource", iris_duckdb_url]) == 0
    shown = terminal.getvalue()
    assert "training" in shown and "7/7" in shown and "rounds" in shown
    summary = re.search(r"trained m \(xgboost.gbtree\) .*: (train_mlogloss [^,]+),", shown)
    assert summary and f"rounds {summary[1]}" in shown  # the bar's last state: the final metric


def test_a_pipe_gets_the_summary_alone(iris_duckdb_url, monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    assert main(["-e", TRAIN, "--datasource", iris_duckdb_url]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("trained m (xgboost.gbtree) on 96 rows") and err.count("\n") == 1


def test_a_pipe_asked_for_progress_gets_lines_ending_with_the_final_metric(
    iris_duckdb_url, monkeypatch, capsys
):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(progress.PROGRESS_ENV, "1")
    assert main(["-e", TRAIN, "--datasource", iris_duckdb_url]) == 0
    lines = capsys.readouterr().err.splitlines()
    final = f"train_mlogloss {stored_metrics(iris_duckdb_url, 'm')['train_mlogloss']:.4g}"
    # Each stage named for the model it trains, a line as it ends (7 rounds take less than
    # LINES_EVERY), then the summary.
    assert lines[:3] == [
        "reading (m): 120 rows",
        f"training (m): 7/7 rounds  {final}",
        "validating (m): 24 rows",
    ]
    assert lines[3].startswith("trained m (xgboost.gbtree) on 96 rows") and final in lines[3]
    assert len(lines) == 4


def test_lines_in_a_pipe_come_at_most_every_lines_every_seconds(monkeypatch):
    stream = io.StringIO()
    sink = progress._LineSink(stream)
    monkeypatch.setattr(progress, "LINES_EVERY", 3600.0)
    slow = sink.bar("training", 3, "rounds")
    slow.update(1, {"loss": 0.5})
    slow.update(1, {})
    monkeypatch.setattr(progress, "LINES_EVERY", 0.0)
    fast = sink.bar("scoring", None, "rows")
    fast.update(10, {})
    slow.update(1, {"loss": 0.25})
    slow.close()  # its state when it ends, once: the line just written said it
    fast.update(5, {})
    fast.close()
    assert stream.getvalue().splitlines() == [
        "scoring: 10 rows",
        "training: 3/3 rounds  loss 0.25",
        "scoring: 15 rows",  # as it ends
    ]


def test_ci_gets_no_bars_even_on_a_terminal(monkeypatch):
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    monkeypatch.setenv("CI", "true")
    assert progress.terminal(FakeTerminal()) is None
    monkeypatch.delenv("CI")
    assert isinstance(progress.terminal(FakeTerminal()), progress._RichSink)
    assert progress.terminal(io.StringIO()) is None


def test_sqlml_progress_asks_for_lines_in_ci_and_pipes_or_for_nothing(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(progress.PROGRESS_ENV, "1")
    assert isinstance(progress.terminal(FakeTerminal()), progress._LineSink)
    monkeypatch.delenv("CI")
    assert isinstance(progress.terminal(io.StringIO()), progress._LineSink)
    assert isinstance(progress.terminal(FakeTerminal()), progress._RichSink)
    monkeypatch.setenv(progress.PROGRESS_ENV, "0")
    assert progress.terminal(FakeTerminal()) is None
