"""A running step's progress for sqlml ui: the Recorder sink keeps each open stage's state
and tells it when a stage opens or ends and at most every ``every`` seconds between; the
local backend keeps it in the step's progress file beside its log (removed once no stage is
open, each stage's final state in the log), and a run's step details show it while the
step runs."""

from __future__ import annotations

import io
import re

from sqlml.backends.local.progress_file import SUFFIX, progress_sink, read_progress
from sqlml.cli import main
from sqlml.runtime import progress
from sqlml.runtime.progress import Progress, Recorder


class Shown:
    """A sink that keeps what its bars were told."""

    def __init__(self) -> None:
        self.updates: list[tuple[int, dict]] = []
        self.closed = 0

    def bar(self, description: str, total: int | None, unit: str) -> Shown:
        return self

    def update(self, advance: int, metrics: dict) -> None:
        self.updates.append((advance, dict(metrics)))

    def close(self) -> None:
        self.closed += 1


def test_a_thousand_rounds_tell_their_state_only_when_a_stage_opens_or_ends():
    told: list[list[str]] = []
    ended: list[str] = []
    shown = Shown()
    reporter = Progress(Recorder(shown, told.append, ended.append, every=3600.0), "m")
    with reporter.stage("training", 1000, "rounds"):
        for round_ in range(1000):
            reporter.advance(1, **({"loss": 1 / (round_ + 1)} if round_ % 100 == 99 else {}))
    assert told == [["training (m): 0/1000 rounds"], []]
    assert ended == ["training (m): 1000/1000 rounds  loss 0.001"]
    assert len(shown.updates) == 1000 and shown.closed == 1  # all passed on to the terminal


def test_states_are_told_at_most_every_every_seconds_and_nested_stages_each_have_a_line():
    told: list[list[str]] = []
    recorder = Recorder(changed=told.append, every=0.0)
    reporter = Progress(recorder)
    with reporter.stage("reading"):
        reporter.advance(10)
        with reporter.stage("training", 3, "rounds"):
            reporter.advance(1, loss=0.5)
            assert recorder.lines() == ["reading: 10 rows", "training: 1/3 rounds  loss 0.5"]
    assert told[2:4] == [["reading: 10 rows", "training: 0/3 rounds"],
                         ["reading: 10 rows", "training: 1/3 rounds  loss 0.5"]]  # fmt: skip
    assert told[-1] == [] and recorder.lines() == []


def test_the_progress_file_holds_the_open_stages_and_the_log_their_ends(tmp_path):
    path, log = tmp_path / f"s1-train{SUFFIX}", io.StringIO()
    reporter = Progress(progress_sink(None, path, log), "m")
    with reporter.stage("training", 5, "rounds"):
        assert read_progress(path) == ["training (m): 0/5 rounds"]
        reporter.advance(5, train_mlogloss=0.25)
    assert not path.exists() and read_progress(path) == []
    assert re.fullmatch(r"\d\d:\d\d:\d\d training \(m\): 5/5 rounds  train_mlogloss 0.25\n",
                        log.getvalue())  # fmt: skip


def test_a_runs_training_step_logs_its_final_rounds_and_metric(iris_duckdb_url, tmp_path,
                                                                monkeypatch, capsys):  # fmt: skip
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "runs"))
    program = tmp_path / "train.sql"
    program.write_text(
        "SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN xgboost.gbtree\n"
        "WITH train.num_boost_round = 4 LABEL class INTO m;\n"
    )
    assert main(["run", str(program), "--datasource", iris_duckdb_url]) == 0
    (folder,) = (tmp_path / "runs").iterdir()
    (log,) = folder.glob("s1-*.log")
    assert re.search(r"training \(m\): 4/4 rounds  train_mlogloss [\d.]+\n", log.read_text())
    assert not list(folder.glob(f"*{SUFFIX}"))  # none once the step has ended


def test_a_page_alone_gets_a_metric_every_few_seconds_a_terminal_as_often_as_before(
    monkeypatch,
):
    monkeypatch.setattr(progress, "RECORDED_METRICS_EVERY", 3600.0)
    monkeypatch.setattr(progress, "METRICS_EVERY", 0.0)
    alone, beside = Progress(Recorder()), Progress(Recorder(Shown()))
    for reporter in (alone, beside):
        with reporter.stage("training", 3, "rounds"):
            assert reporter.metrics_due()  # the first round's
            assert reporter.metrics_due() is (reporter is beside)
