"""--resume runs a step again when what it wrote is gone: a model dropped (DROP MODEL), a
predicted table or a created table dropped since the run. It used to skip the step as
unchanged, and the steps reading its output failed at every resumption. What a step writes
is what its statement kind declares (its effects): TO MAXIMIZE's and TO RUN's tables used to
stay missing. A step unchanged is skipped: a step reading a model used to run again when
another model had been saved while it ran (its content hash held the whole model store's
fingerprint)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url

from sqlml.backends.local.record import RunRecord, StepRecord
from sqlml.backends.local.resume import Resume
from sqlml.cli import main
from sqlml.codegen import to_workflow
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.models.store import ModelStore
from sqlml.semantics import analyze


def labelled(count: int, seed: int) -> dict[str, np.ndarray]:
    """Rows whose label y is 1 exactly when a + b > 10."""
    rng = np.random.default_rng(seed)
    columns = {"id": np.arange(count), "a": rng.uniform(0, 10, count)}
    columns["b"] = rng.uniform(0, 10, count)
    columns["y"] = (columns["a"] + columns["b"] > 10).astype(np.int64)
    return columns


def run(file: Path, url: str, capsys, *options: str) -> tuple[int, str, str]:
    """``sqlml run`` in this process: exit status, run id and stderr."""
    status = main(["run", str(file), "--datasource", url, "--jobs", "1", *options])
    err = capsys.readouterr().err
    found = re.search(r"sqlml: run ([\w-]+)", err)
    assert found, err
    return status, found.group(1), err


def records(url: str, run_id: str) -> list[StepRecord]:
    """The run's steps, in program order (their names start s1-, s2-...)."""
    ds = connect(url)
    try:
        steps = RunRecord(ds).steps(run_id)
    finally:
        ds.close()
    return [steps[name] for name in sorted(steps, key=lambda n: int(n[1:].split("-")[0]))]


def states(url: str, run_id: str) -> list[str]:
    return [step.state for step in records(url, run_id)]


@pytest.fixture(params=["duckdb", "postgresql"])
def setup(request, tmp_path, unique_name):
    """A database with training and test rows, and names for what the program writes."""
    url = datasource_url(request.param, tmp_path)
    names = {part: f"{unique_name}_{part}" for part in ("train", "test", "m", "pred", "later")}
    ds = connect(url)
    ds.write_table([names["train"]], labelled(400, seed=1))
    ds.write_table([names["test"]], labelled(100, seed=2))
    ds.close()
    yield url, names
    ds = connect(url)
    for part in ("train", "test", "pred", "later"):
        ds.execute(f"DROP TABLE IF EXISTS {names[part]}")
    ModelStore(ds).drop(names["m"])
    ds.close()


def program(tmp_path: Path, names: dict[str, str]) -> Path:
    """Train, predict, then a step that fails until the table ``later`` exists."""
    file = tmp_path / "program.sql"
    file.write_text(
        f"SELECT a, b, y FROM {names['train']} TO TRAIN xgboost.gbtree "
        f'WITH objective = "binary:logistic", train.num_boost_round = 30 '
        f"LABEL y INTO {names['m']};\n"
        f"SELECT id, a, b FROM {names['test']} TO PREDICT {names['pred']}.y USING {names['m']};\n"
        f"SELECT count(*) AS n FROM {names['pred']}, {names['later']};\n"
    )
    return file


def accuracy(url: str, names: dict[str, str]) -> float:
    ds = connect(url)
    try:
        found = ds.execute(
            f"SELECT p.y, t.y FROM {names['pred']} AS p JOIN {names['test']} AS t ON p.id = t.id"
        ).rows
    finally:
        ds.close()
    assert len(found) == 100
    return sum(int(p) == int(t) for p, t in found) / len(found)


def failed_run(file: Path, url: str, names: dict[str, str], capsys) -> str:
    """Run the program until its last step fails, then make that step's table."""
    status, first, err = run(file, url, capsys)
    assert status == 1 and states(url, first) == ["succeeded", "succeeded", "failed"], err
    ds = connect(url)
    ds.execute(f"CREATE TABLE {names['later']} AS SELECT 1 AS z")
    ds.close()
    return first


def test_a_dropped_model_is_trained_again(setup, tmp_path, capsys):
    url, names = setup
    file = program(tmp_path, names)
    first = failed_run(file, url, names, capsys)
    assert main(["-e", f"DROP MODEL {names['m']};", "--datasource", url]) == 0
    capsys.readouterr()
    status, second, err = run(file, url, capsys, "--resume", first, "--format", "csv")
    assert status == 0, err
    assert re.search(rf"step s1-\S+ runs again: its model {names['m']} is gone", err), err
    assert states(url, second) == ["succeeded", "succeeded", "succeeded"]
    assert accuracy(url, names) >= 0.85
    ds = connect(url)
    assert ModelStore(ds).list_versions(names["m"]) == [1]  # versions restart after a DROP
    ds.close()


def test_a_dropped_prediction_table_is_predicted_again(setup, tmp_path, capsys):
    url, names = setup
    file = program(tmp_path, names)
    first = failed_run(file, url, names, capsys)
    ds = connect(url)
    ds.execute(f"DROP TABLE {names['pred']}")
    ds.close()
    status, second, err = run(file, url, capsys, "--resume", first)
    assert status == 0, err
    assert states(url, second) == ["cached", "succeeded", "succeeded"]  # not trained again
    assert records(url, first)[1].content_hash == records(url, second)[1].content_hash
    assert re.search(rf"step s2-\S+ runs again: its table {names['pred']} is gone", err)
    assert accuracy(url, names) >= 0.85


def test_nothing_gone_nothing_run_again(setup, tmp_path, capsys):
    """Mixed-case names are looked up as the statements wrote them: no needless re-run."""
    url, names = setup
    created = f"Created_{names['later']}"
    file = tmp_path / "program.sql"
    file.write_text(
        f"CREATE TABLE {created} AS SELECT * FROM {names['train']};\n"
        f"SELECT a, b, y FROM {created} TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 5 LABEL y INTO {names['m']}_Mixed;\n"
        f"SELECT count(*) AS n FROM {names['later']};\n"
    )
    try:
        status, first, _ = run(file, url, capsys)
        assert status == 1
        ds = connect(url)
        ds.execute(f"CREATE TABLE {names['later']} AS SELECT 1 AS z")
        ds.close()
        status, second, err = run(file, url, capsys, "--resume", first)
        assert status == 0 and "runs again" not in err, err
        assert states(url, second) == ["cached", "cached", "succeeded"]
        ds = connect(url)  # a created table dropped: created and trained again
        ds.execute(f"DROP TABLE {created}")
        ds.close()
        status, third, err = run(file, url, capsys, "--resume", second)
        assert status == 0, err
        assert f"runs again: its table {created} is gone" in err
        assert states(url, third) == ["succeeded", "succeeded", "cached"]
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE IF EXISTS {created}")
        ModelStore(ds).drop(f"{names['m']}_Mixed")
        ds.close()


def test_a_program_that_drops_its_scratch_table_resumes(duckdb_url, tmp_path, capsys):
    """A scratch table created, read and dropped by the program: the step reading it runs
    again when resuming (its input changed: the table is gone), so the step creating it runs
    again too, and the DROP after them."""
    file = tmp_path / "program.sql"
    file.write_text(
        "CREATE TABLE scratch AS SELECT 1 AS x;\n"
        "CREATE OR REPLACE TABLE kept AS SELECT x + 1 AS x FROM scratch;\n"
        "DROP TABLE scratch;\n"
        "SELECT * FROM kept, later;\n"
    )
    status, first, _ = run(file, duckdb_url, capsys)
    assert status == 1
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE later AS SELECT 1 AS z")
    ds.close()
    status, second, err = run(file, duckdb_url, capsys, "--resume", first, "--format", "csv")
    assert status == 0, err
    assert "step s1-create runs again: its table scratch is gone" in err
    assert states(duckdb_url, second) == ["succeeded"] * 4
    ds = connect(duckdb_url)
    assert ds.execute("SELECT x FROM kept").rows == [(2,)] and not ds.table_exists(["scratch"])
    ds.close()


def test_a_dropped_search_model_searches_again(duckdb_url, tmp_path, capsys):
    """A search's trials step keeps no model of its own (the search drops the trials' models
    once it saved the best): when the search's model is gone, the trials run again too."""
    file = tmp_path / "program.sql"
    file.write_text(
        "CREATE OR REPLACE TABLE d AS SELECT i / 10.0 AS x, i % 2 AS y FROM range(200) t(i);\n"
        'SELECT x, y FROM d TO TRAIN xgboost.gbtree WITH objective = "binary:logistic", '
        "max_depth = CHOICE(2, 3), search.trials = 2, train.num_boost_round = 5 "
        "LABEL y INTO sm;\n"
        "SELECT count(*) AS n FROM sm_trials, later;\n"
    )
    status, first, _ = run(file, duckdb_url, capsys)
    assert status == 1
    assert main(["-e", "DROP MODEL sm; CREATE TABLE later AS SELECT 1 AS z;",
                 "--datasource", duckdb_url]) == 0  # fmt: skip
    capsys.readouterr()
    status, second, err = run(file, duckdb_url, capsys, "--resume", first)
    assert status == 0, err
    assert "step s2-train-sm-trials runs again: its model sm is gone" in err
    assert states(duckdb_url, second) == ["cached", "succeeded", "succeeded", "succeeded"]
    ds = connect(duckdb_url)
    assert ModelStore(ds).list_versions("sm") == [1]
    assert [name for name, _, _ in ModelStore(ds).list()] == ["sm"]  # no trial models left
    ds.close()


# Every statement kind ---------------------------------------------------------------------------

KINDS_PROGRAM = """\
CREATE TABLE {t}_copy AS SELECT id, a, b, y FROM {t};
SELECT a, b, y FROM {t} TO TRAIN xgboost.gbtree
  WITH objective = "binary:logistic", train.num_boost_round = 5 LABEL y INTO {t}_m;
SELECT a, b, y FROM {t} TO TRAIN xgboost.gbtree WITH objective = "binary:logistic",
  max_depth = CHOICE(2, 3), search.trials = 2, train.num_boost_round = 3 LABEL y INTO {t}_sm;
SELECT id, a, b FROM {t} TO PREDICT {t}_pred.y USING {t}_m;
SELECT a, b, y FROM {t} TO EVALUATE {t}_m WITH evaluate.plot = 'evaluation.png'
  LABEL y INTO {t}_eval;
SELECT a, b FROM {t} TO EXPLAIN {t}_m WITH explain.plot = 'explanation.png' INTO {t}_explained;
SELECT a FROM {t} TO RUN halves_{t}.halves INTO {t}_low, {t}_high;
SELECT id, a, b FROM {t} WHERE id < 5 TO MAXIMIZE SUM(a * amount)
  CONSTRAINT SUM(b * amount) <= 10, amount <= 1
  WITH variables = "amount(id)", var_type = "NonNegativeIntegers" INTO {t}_plan;
SELECT count(*) AS n FROM {t}_copy, {t}_later;
"""
HALVES = '''
def halves(rows):
    """The rows whose a is below 5, and the others."""
    low = rows["a"] < 5
    return {{"{t}_low": {{"a": rows["a"][low]}}, "{t}_high": {{"a": rows["a"][~low]}}}}
'''
# What is removed between two resumptions (a table dropped, a model dropped, a file deleted)
# and the steps that must run again, by statement number ("3-trials": the search's trials).
REMOVALS = [
    ("table", "copy", {"1", "9"}),  # CREATE TABLE ... AS, and the statement reading it
    ("model", "m", {"2", "4", "5", "6"}),  # TO TRAIN, and the statements using the model
    ("model", "sm", {"3-trials", "3"}),  # a search: its trials, then the best kept
    ("table", "sm_trials", {"3-trials", "3"}),
    ("table", "pred", {"4"}),  # TO PREDICT
    ("table", "eval", {"5"}),  # TO EVALUATE ... INTO
    ("file", "evaluation.png", {"5"}),  # its evaluate.plot
    ("table", "explained", {"6"}),  # TO EXPLAIN ... INTO
    ("file", "explanation.png", {"6"}),  # its explain.plot
    ("table", "high", {"7"}),  # the second INTO table of TO RUN
    ("table", "plan", {"8"}),  # TO MAXIMIZE ... INTO
]


def _statement_numbers(url: str, run_id: str) -> dict[str, str]:
    """Each step of the run by its statement's number ("3-trials" for a search's trials):
    its state."""
    ds = connect(url)
    try:
        steps = RunRecord(ds).steps(run_id)
    finally:
        ds.close()
    return {_number(name): step.state for name, step in steps.items()}


def _number(step: str) -> str:
    """``s03-train-m-trials`` -> ``3-trials``."""
    number = step.split("-")[0][1:].lstrip("0")
    return f"{number}-trials" if step.endswith("-trials") else number


def _remove(url: str, folder: Path, what: str, name: str) -> None:
    if what == "file":
        (folder / name).unlink()
        return
    ds = connect(url)
    try:
        if what == "model":
            assert ModelStore(ds).drop(name)
        else:
            ds.execute(f"DROP TABLE {name}")
    finally:
        ds.close()


@pytest.fixture(params=["duckdb", "mysql", "postgresql"])
def kinds_database(request, tmp_path, unique_name):
    """A database holding the rows the program of every kind reads; what it wrote dropped
    after."""
    url = datasource_url(request.param, tmp_path)
    t = unique_name
    ds = connect(url)
    ds.write_table([t], labelled(200, seed=3))
    ds.close()
    yield url, t
    ds = connect(url)
    for suffix in ("", "_copy", "_sm_trials", "_pred", "_eval", "_explained", "_low", "_high",
                   "_plan", "_later"):  # fmt: skip
        ds.execute(f"DROP TABLE IF EXISTS {t}{suffix}")
    for model in ("_m", "_sm"):
        ModelStore(ds).drop(t + model)
    ds.close()


def test_every_kind_runs_again_exactly_when_its_output_is_gone(kinds_database, tmp_path, capsys):
    url, t = kinds_database
    file = tmp_path / "kinds.sql"
    file.write_text(KINDS_PROGRAM.format(t=t))
    (tmp_path / f"halves_{t}.py").write_text(HALVES.format(t=t))
    status, last, err = run(file, url, capsys, "--jobs", "2")
    assert status == 1 and f"{t}_later" in err, err
    ds = connect(url)
    ds.execute(f"CREATE TABLE {t}_later AS SELECT 1 AS z")
    ds.close()
    steps = set(_statement_numbers(url, last))
    for what, name, again in [("nothing", "", {"9"}), ("nothing", "", set()), *REMOVALS]:
        removed = name if what == "file" else f"{t}_{name}"
        if what != "nothing":
            _remove(url, tmp_path, what, removed)
        status, resumed, err = run(file, url, capsys, "--resume", last, "--jobs", "2")
        assert status == 0, err
        ended = _statement_numbers(url, resumed)
        ran = {step for step, state in ended.items() if state == "succeeded"}
        skipped = {step for step, state in ended.items() if state == "cached"}
        assert (ran, skipped) == (again, steps - again), (what, name, err)
        if what != "nothing":
            assert f"runs again: its {what} {removed} is gone" in err, err
        last = resumed


@pytest.mark.parametrize("kind", ["duckdb", "mysql", "postgresql"])
def test_a_step_reading_a_model_keeps_its_hash_while_other_models_are_saved(
    kind, tmp_path, unique_name
):
    """A step's content hash holds the model it reads as that model's own versions: a model
    saved meanwhile by another step (as the run's trainings do in parallel) is no change."""
    url = datasource_url(kind, tmp_path)
    read, other = f"{unique_name}_read", f"{unique_name}_other"
    (statement,) = analyze(parse(f"SELECT a FROM {unique_name} TO PREDICT p.y USING {read};"))
    (step,) = to_workflow([statement], "hash").steps
    ds = connect(url)
    try:
        store = ModelStore(ds)
        store.save(read, {"trained_at": "first"}, b"model")
        resume = Resume(ds, {}, print)

        def content_hash() -> str:
            return resume.content_hash(step, lambda ref: "")

        before = content_hash()
        store.save(other, {"trained_at": "meanwhile"}, b"another model")
        assert content_hash() == before
        store.save(read, {"trained_at": "second"}, b"model")  # a new version of the one read
        assert content_hash() != before
    finally:
        for model in (read, other):
            ModelStore(ds).drop(model)
        ds.close()
