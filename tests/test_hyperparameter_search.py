"""Hyperparameter search: TO TRAIN with CHOICE/UNIFORM/LOG_UNIFORM/INT_RANGE candidates.

Checked at check time with positions; planned as a grid or seeded random draws; run locally
as parallel trials and a fan-in that keeps the best; compiled for Argo as a Katib Experiment.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import import_or_skip
from pod_runtime import container_env, container_process, katib_fill, katib_wrap

from sqlml import ir
from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.backends.local.codegen import to_python
from sqlml.cli import main
from sqlml.codegen import to_workflow
from sqlml.datasources import connect
from sqlml.errors import CheckError, KubernetesError, ParseError
from sqlml.grammar import ast, parse
from sqlml.models.store import ModelStore
from sqlml.runtime.execute import execute
from sqlml.search_space import as_text, decode, grid_points, plan
from sqlml.semantics import analyze
from sqlml.statements import kind_of, resolve
from sqlml.steps.search_steps import trial_items

SEARCH = """
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', max_depth = CHOICE(1, 3), eta = CHOICE(0.1, 0.5),
     train.num_boost_round = INT_RANGE(4, 6), search.algorithm = grid,
     search.trials_table = {table}
LABEL class INTO {model};
"""


def search_statement(text: str) -> ir.SearchStatement:
    (statement,) = analyze(parse(text))
    assert isinstance(statement, ir.SearchStatement)
    return statement


# Parsing ----------------------------------------------------------------------------------------


def test_candidates_parse_with_the_position_of_each_value():
    text = (
        "SELECT * FROM t TO TRAIN m WITH a = CHOICE(4, [1, 2],\n"
        "  'x'), b = log_uniform(1e-4, 0.1)\nINTO n;"
    )
    (statement,) = parse(text).statements
    a, b = statement.attributes
    assert a.value == ast.Candidates(
        "CHOICE",
        (4, (1, 2), "x"),
        (ast.Position(1, 44, 43), ast.Position(1, 47, 46), ast.Position(2, 3, 56)),
        ast.Position(1, 37, 36),
    )
    assert b.value.function == "LOG_UNIFORM"
    assert b.value.values == (0.0001, 0.1)


def test_a_search_word_without_parentheses_is_still_a_plain_value():
    (statement,) = parse("SELECT * FROM t TO TRAIN m WITH optimizer = choice INTO n;").statements
    assert statement.attributes[0].value == "choice"


def test_an_unclosed_candidate_list_is_a_parse_error_at_its_end():
    text = "SELECT * FROM t TO TRAIN m WITH a = CHOICE(4, 6 LABEL y INTO n;"
    with pytest.raises(ParseError, match="unexpected 'LABEL'") as raised:
        parse(text)
    assert (raised.value.line, raised.value.column) == (1, text.index("LABEL") + 1)


# Checking ---------------------------------------------------------------------------------------

_TRAIN = "SELECT * FROM t TO TRAIN {estimator} WITH {attributes} LABEL y INTO m;"


@pytest.mark.parametrize(
    ("estimator", "attributes", "at", "message", "hint"),
    [
        ("xgboost.gbtree", "max_depth = CHOICE(4, -1)", "-1", "max_depth must be >= 0", "depth"),
        ("xgboost.gbtree", "eta = CHOICE(0.1, 'fast')", "'fast'", "must be a number", "learning"),
        ("xgboost.gbtree", "etaa = CHOICE(0.1)", "etaa", "no attribute etaa", "did you mean eta"),
        ("xgboost.gbtree", "max_depth = UNIFORM(1, 4)", "UNIFORM", "gives numbers", "INT_RANGE"),
        ("xgboost.gbtree", "eta = UNIFORM(0.5, 0.1)", "0.5", "low bound 0.5 must be below", None),
        ("xgboost.gbtree", "eta = UNIFORM(0.1, 2)", "2)", "eta must be <= 1", None),
        ("xgboost.gbtree", "eta = LOG_UNIFORM(0, 0.1)", "0,", "above 0", None),
        ("xgboost.gbtree", "max_depth = INT_RANGE(1)", "INT_RANGE", "takes two bounds", "(1, 4)"),
        ("xgboost.gbtree", "max_depth = INT_RANGE(1, 2.5)", "2.5", "must be an integer", None),
        ("xgboost.gbtree", "max_depth = CHOICE()", "CHOICE", "at least one candidate", None),
        ("xgboost.gbtree", "eta = CHOICE(CHOICE(1))", "CHOICE(1", "cannot be a candidate", None),
        ("xgboost.gbtree", "search.trials = 5", "search", "no attribute has candidates", "CHOICE"),
        (
            "xgboost.gbtree",
            "eta = UNIFORM(0.1, 0.2), search.algorithm = grid",
            "UNIFORM",
            "grid search cannot enumerate UNIFORM",
            "search.algorithm = random",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.metric = rmse",
            "search",
            "does not apply",
            "log_loss",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.metric = speed",
            "search",
            "unknown metric speed in search.metric",
            "the metrics are accuracy",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.metric = CategoricalAcuracy",
            "search",
            "unknown metric CategoricalAcuracy in search.metric",
            "did you mean CategoricalAccuracy?",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.metric = MeanSquaredError",
            "search",
            "search.metric MeanSquaredError does not apply to a classifier",
            "accuracy_score",
        ),
        (
            "xgboost.gbtree",
            "eta = CHOICE(0.1), validation.metrics = 'r2_score', search.metric = f1_score",
            "search",
            "search.metric f1_score measures a classifier but validation.metrics' r2_score a "
            "regressor",
            None,
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), validation.split = 0",
            "eta",
            "validation.split is 0",
            "validation.select",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1, 0.2), search.algorithm = grid, search.parallel = 3",
            "search.parallel",
            "more than the 2 trials",
            None,
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.trials = CHOICE(1)",
            "search",
            "one value",
            None,
        ),
        ("XGBClassifier", "eta = CHOICE(0.1), eta = 0.2", "eta = 0", "given twice", None),
        ("XGBClassifier", "validation.split = CHOICE(0.1, 0.2)", "validation", "same rows", None),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.trails = 2",
            "search",
            "no attribute search.trails",
            "did you mean search.trials",
        ),
        ("XGBClassifier", "eta = CHOICE(0.1), train.workers = 2", "eta", "one process", "workers"),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.early_stopping = hyperband",
            "search.early",
            "search.early_stopping must be one of 'medianstop'",
            None,
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.early_stopping.start_step = 2",
            "search.early",
            "search.early_stopping.start_step applies to search.early_stopping = medianstop",
            "set search.early_stopping = medianstop",
        ),
        (
            "XGBClassifier",
            "eta = CHOICE(0.1), search.early_stopping = medianstop, "
            "search.early_stopping.min_trials = 0",
            "search.early_stopping.min",
            "min_trials must be >= 1",
            None,
        ),
        (
            "DNNClassifier",
            "model.hidden_units = CHOICE([10], [0])",
            "[0]",
            "hidden_units must be >= 1",
            None,
        ),
    ],
)
def test_bad_searches_are_check_errors_at_their_position(estimator, attributes, at, message, hint):
    text = _TRAIN.format(estimator=estimator, attributes=attributes)
    with pytest.raises(CheckError, match=re.escape(message)) as raised:
        analyze(parse(text))
    start = text.index("WITH")
    assert (raised.value.line, raised.value.column) == (1, text.index(at, start) + 1)
    if hint is not None:
        assert hint in raised.value.hint


def test_only_to_train_takes_candidates():
    program = "SELECT * FROM t TO PREDICT p.y WITH predict.batch_size = CHOICE(1, 2) USING m;"
    with pytest.raises(CheckError, match="TO PREDICT does not run") as raised:
        analyze(parse(program))
    assert (raised.value.line, raised.value.column) == (1, 58)


def test_a_search_lowers_to_its_space_and_settings_with_defaults():
    statement = search_statement(
        "SELECT * FROM t TO TRAIN DNNRegressor WITH model.hidden_units = CHOICE([8], [16, 8]),"
        " optimizer.learning_rate = LOG_UNIFORM(1e-4, 1e-1), train.epoch = INT_RANGE(1, 3),"
        " search.trials = 4, search.seed = 7 LABEL y INTO db.m;"
    )
    assert statement.space == {
        "model.hidden_units": {"kind": "choice", "type": "int list", "values": [[8], [16, 8]]},
        "optimizer.learning_rate": {
            "kind": "log_uniform",
            "type": "float",
            "low": 0.0001,
            "high": 0.1,
        },
        "train.epoch": {"kind": "int_range", "type": "int", "low": 1, "high": 3},
    }
    assert statement.search == {
        "trials": 4,
        "algorithm": "random",
        "seed": 7,
        "metric": "rmse",
        "goal": "minimize",
        "parallel": 3,
        "trials_table": ["db", "m_trials"],
        "replace_table": False,
    }
    assert "model.hidden_units" not in statement.attributes  # each trial gives its own
    assert ir.from_dict(json.loads(statement.to_json())) == statement


def test_a_plain_list_keeps_meaning_a_list_value():
    (statement,) = analyze(
        parse(
            "SELECT * FROM t TO TRAIN DNNClassifier WITH model.hidden_units = [10, 20] "
            "LABEL y INTO m;"
        )
    )
    assert type(statement) is ir.TrainStatement
    assert statement.attributes["model.hidden_units"] == [10, 20]


def test_a_classifier_search_maximizes_accuracy_and_log_loss_is_minimized():
    base = "SELECT * FROM t TO TRAIN XGBClassifier WITH eta = CHOICE(0.1, 0.3){} LABEL y INTO m;"
    default = search_statement(base.format("")).search
    assert (default["metric"], default["goal"]) == ("accuracy", "maximize")
    loss = search_statement(base.format(", search.metric = log_loss")).search
    assert (loss["metric"], loss["goal"]) == ("log_loss", "minimize")


@pytest.mark.parametrize(
    ("estimator", "settings", "metric", "goal", "computed"),
    [
        # Keras's names of sqlml's own metrics: reported (and ranked by) sqlml's name
        ("DNNClassifier", "search.metric = AUC", "auc", "maximize", None),
        ("DNNClassifier", "search.metric = Accuracy", "accuracy", "maximize", None),
        # the others, as validation.metrics reports them: the trials are told to compute them
        ("DNNClassifier", "search.metric = CategoricalAccuracy", "CategoricalAccuracy",
         "maximize", "CategoricalAccuracy"),
        ("XGBClassifier", "search.metric = accuracy_score", "accuracy_score", "maximize",
         "accuracy_score"),
        ("XGBClassifier", "search.metric = hamming_loss", "hamming_loss", "minimize",
         "hamming_loss"),
        ("XGBClassifier", "search.metric = FalseNegatives", "FalseNegatives", "minimize",
         "FalseNegatives"),
        ("DNNRegressor", "search.metric = MeanSquaredError", "MeanSquaredError", "minimize",
         "MeanSquaredError"),
        ("XGBRegressor", "search.metric = r2_score", "r2_score", "maximize", "r2_score"),
        # a name validation.metrics already holds, in its spelling there
        ("XGBClassifier", "validation.metrics = 'Accuracy_Score,AUC', search.metric = "
         "accuracy_score", "Accuracy_Score", "maximize", "Accuracy_Score,AUC"),
        ("XGBClassifier", "validation.metrics = 'f1_score', search.metric = auc", "auc",
         "maximize", "f1_score"),
        ("XGBClassifier", "validation.metrics = 'f1_score', search.metric = precision_score",
         "precision_score", "maximize", "f1_score,precision_score"),
    ],
)  # fmt: skip
def test_search_metric_takes_every_name_validation_metrics_takes(
    estimator, settings, metric, goal, computed
):
    first = "model.hidden_units = CHOICE([4], [8])" if "DNN" in estimator else "eta = CHOICE(0.1)"
    statement = search_statement(
        _TRAIN.format(estimator=estimator, attributes=f"{first}, {settings}")
    )
    assert (statement.search["metric"], statement.search["goal"]) == (metric, goal)
    assert statement.attributes.get("validation.metrics") == computed


def test_a_search_ranks_its_trials_by_a_scikit_learn_metric(iris_duckdb_url, unique_name, capsys):
    model, table = f"{unique_name}_m", f"{unique_name}_trials"
    program = (
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', "
        "max_depth = CHOICE(1, 3), train.num_boost_round = 3, search.algorithm = grid, "
        f"search.metric = balanced_accuracy_score, search.trials_table = {table} "
        f"LABEL class INTO {model};"
    )
    status = main(["-e", program, "--datasource", iris_duckdb_url])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "with validation balanced_accuracy_score" in out + err
    ds = connect(iris_duckdb_url)
    try:
        rows = ds.execute(
            f"SELECT trial, validation_balanced_accuracy_score FROM {table} ORDER BY trial"
        ).rows
        search = ModelStore(ds).load(model).metadata["search"]
    finally:
        ds.close()
    scores = [score for _, score in rows]
    assert len(scores) == 2 and all(0 < score <= 1 for score in scores)
    assert search["metric"] == "balanced_accuracy_score" and search["goal"] == "maximize"
    assert search["best_trial"] == max(range(2), key=lambda n: (scores[n], -n))


# Planning ---------------------------------------------------------------------------------------

SPACE = {
    "max_depth": {"kind": "choice", "type": "int", "values": [2, 4]},
    "rounds": {"kind": "int_range", "type": "int", "low": 1, "high": 3},
    "mode": {"kind": "choice", "type": "string", "values": ["a", "b"]},
}


def test_a_grid_enumerates_every_combination_the_last_attribute_fastest():
    assert grid_points(SPACE) == 12
    points = plan(SPACE, "grid", 12, seed=0)
    assert points[:4] == [
        {"max_depth": 2, "mode": "a", "rounds": 1},
        {"max_depth": 2, "mode": "a", "rounds": 2},
        {"max_depth": 2, "mode": "a", "rounds": 3},
        {"max_depth": 2, "mode": "b", "rounds": 1},
    ]
    assert len({json.dumps(p, sort_keys=True) for p in points}) == 12
    assert plan(SPACE, "grid", 5, seed=0) == points[:5]


def test_a_grid_over_a_huge_range_is_counted_not_listed():
    space = {"n": {"kind": "int_range", "low": 1, "high": 10**12, "type": "int"}}
    assert grid_points(space) == 10**12
    assert plan(space, "grid", 2, seed=0) == [{"n": 1}, {"n": 2}]


def test_a_grid_search_runs_every_point_unless_told_fewer():
    every = search_statement(
        "SELECT * FROM t TO TRAIN XGBClassifier WITH max_depth = CHOICE(2, 4), "
        "train.num_boost_round = INT_RANGE(5, 7), search.algorithm = grid LABEL y INTO m;"
    )
    assert every.search["trials"] == 6
    fewer = search_statement(
        "SELECT * FROM t TO TRAIN XGBClassifier WITH max_depth = CHOICE(2, 4), "
        "search.algorithm = grid, search.trials = 1 LABEL y INTO m;"
    )
    assert fewer.search["trials"] == 1


def test_random_draws_are_reproducible_and_stay_in_their_ranges():
    space = {
        "eta": {"kind": "uniform", "type": "float", "low": 0.01, "high": 0.3},
        "lr": {"kind": "log_uniform", "type": "float", "low": 1e-4, "high": 1e-1},
        "depth": {"kind": "int_range", "type": "int", "low": 1, "high": 4},
        "units": {"kind": "choice", "type": "int list", "values": [[10], [20, 20]]},
    }
    first = plan(space, "random", 200, seed=3)
    assert first == plan(space, "random", 200, seed=3)
    assert first != plan(space, "random", 200, seed=4)
    assert all(0.01 <= p["eta"] <= 0.3 and 1e-4 <= p["lr"] <= 0.1 for p in first)
    assert {p["depth"] for p in first} == {1, 2, 3, 4}
    assert {json.dumps(p["units"]) for p in first} == {"[10]", "[20, 20]"}
    # A log-uniform draw is as often below the geometric mean as above it.
    below = sum(p["lr"] < math.sqrt(1e-4 * 1e-1) for p in first)
    assert 60 <= below <= 140
    # What a trial receives (text) decodes to the planned values.
    for values in first[:20]:
        assert decode(space, {k: as_text(v) for k, v in values.items()}) == values


def test_decoding_rejects_values_outside_the_space():
    with pytest.raises(Exception, match="not one of its candidates"):
        decode(SPACE, {"max_depth": "3", "rounds": "1", "mode": "a"})
    with pytest.raises(Exception, match=r"outside 1\.\.3"):
        decode(SPACE, {"max_depth": "2", "rounds": "9", "mode": "a"})


# Running locally --------------------------------------------------------------------------------


def _accuracy(ds, table: str) -> float:
    predicted = ds.execute(f"SELECT id, class FROM {table}").rows
    truth = dict(ds.execute("SELECT id, class FROM iris_test").rows)
    return sum(truth[i] == c for i, c in predicted) / len(predicted)


def test_a_local_grid_search_keeps_the_best_trial(iris_duckdb_url, unique_name, tmp_path, capsys):
    model, table = f"{unique_name}_model", f"{unique_name}_trials"
    program = tmp_path / "search.sql"
    program.write_text(
        SEARCH.format(model=model, table=table)
        + f"SELECT * FROM iris_test TO PREDICT {unique_name}_pred.class USING {model};"
    )
    status = main(["run", str(program), "--datasource", iris_duckdb_url, "--jobs", "2"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert f"searched 12 trials of {model}: best trial" in captured.err

    ds = connect(iris_duckdb_url)
    try:
        result = ds.execute(f"SELECT * FROM {table} ORDER BY trial")
        stored = ModelStore(ds).load(model)
        accuracy = _accuracy(ds, f"{unique_name}_pred")
        left = [name for name, _, _ in ModelStore(ds).list() if "__trial_" in name]
    finally:
        ds.close()
    assert result.columns[:4] == ["trial", "eta", "max_depth", "train_num_boost_round"]
    assert result.columns[-1] == "status"
    assert "validation_accuracy" in result.columns and "train_mlogloss" not in result.columns
    rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    assert [row["trial"] for row in rows] == list(range(12))
    assert {(r["eta"], r["max_depth"], r["train_num_boost_round"]) for r in rows} == {
        (eta, depth, rounds) for eta in (0.1, 0.5) for depth in (1, 3) for rounds in (4, 5, 6)
    }
    assert all(row["status"] == "succeeded" for row in rows), [
        r.get("error") for r in stored.metadata["search"]["results"]
    ]
    best = max(rows, key=lambda row: (row["validation_accuracy"], -row["trial"]))
    search = stored.metadata["search"]
    assert search["best_trial"] == best["trial"]
    assert stored.metadata["metrics"]["validation_accuracy"] == best["validation_accuracy"]
    for name in ("eta", "max_depth", "train.num_boost_round"):
        assert stored.metadata["attributes"][name] == best[name.replace(".", "_")]
    assert [r["trial"] for r in search["results"]] == list(range(12))
    assert stored.metadata["statement"].startswith("SELECT sepal_length")
    assert left == []  # the trial models are dropped
    assert accuracy >= 0.9, f"accuracy {accuracy:.3f} on held-out rows"


def test_a_random_search_on_each_database_is_reproducible(iris_url, unique_name, capsys):
    model, table = f"{unique_name}_m", f"{unique_name}_t"
    program = (
        "SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN XGBClassifier "
        "WITH eta = UNIFORM(0.05, 0.5), max_depth = INT_RANGE(1, 4), search.trials = 3, "
        f"search.seed = 5, search.trials_table = {table} LABEL class INTO {model};"
    )
    runs = []
    for _ in range(2):
        assert main(["-e", program, "--datasource", iris_url]) == 0, capsys.readouterr().err
        ds = connect(iris_url)
        try:
            runs.append(ds.execute(f"SELECT * FROM {table} ORDER BY trial").rows)
            versions = ModelStore(ds).list_versions(model)
        finally:
            ds.close()
    ds = connect(iris_url)
    try:
        ds.execute(f"DROP TABLE {table}")
        ModelStore(ds).drop(model)
    finally:
        ds.close()
    assert runs[0] == runs[1]
    assert len(runs[0]) == 3 and len(versions) == 2
    statement = search_statement(program)
    planned = plan(statement.space, "random", 3, 5)
    assert [(row[1], row[2]) for row in runs[0]] == [
        (pytest.approx(p["eta"]), p["max_depth"]) for p in planned
    ]


def test_a_failed_trial_is_recorded_and_the_others_still_count(iris_duckdb_url, unique_name):
    # num_class = 2 cannot fit three classes: those trials fail, the num_class = 3 ones run.
    model = f"{unique_name}_m"
    program = (
        "SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH objective = 'multi:softprob', num_class = CHOICE(2, 3), search.algorithm = grid "
        f"LABEL class INTO {model};"
    )
    assert main(["-e", program, "--datasource", iris_duckdb_url]) == 0
    ds = connect(iris_duckdb_url)
    try:
        rows = ds.execute(f"SELECT num_class, status FROM {model}_trials ORDER BY trial").rows
        stored = ModelStore(ds).load(model)
    finally:
        ds.close()
    assert rows == [(2, "failed"), (3, "succeeded")]
    assert stored.metadata["attributes"]["num_class"] == 3


def test_a_cancelled_search_drops_the_trials_it_stored(iris_duckdb_url, unique_name):
    """What the local executor runs when the run's cancellation stops a trial: its kind's
    declared ``on_cancel``, which drops the search's trials stored so far."""
    model = f"{unique_name}_m"
    search = search_statement(
        "SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH objective = 'multi:softprob', num_class = 3, max_depth = CHOICE(2, 3) "
        f"LABEL class INTO {model};"
    )
    fields = {field.name: getattr(search, field.name) for field in dataclasses.fields(search)}
    trial = ir.TrialStatement(**{**fields, "trial": {"trial": "0", "max_depth": "2"}})
    undo = resolve(kind_of(trial).on_cancel or "")
    ds = connect(iris_duckdb_url)
    try:
        execute(trial, ds)
        assert undo(trial, ds) == f"dropped the search's trials: {model}__trial_0"
        assert not [name for name, _, _ in ModelStore(ds).list() if name.startswith(model)]
        assert undo(trial, ds) == ""  # nothing left to drop
    finally:
        ds.close()


def test_a_search_whose_trials_all_fail_is_an_error(iris_duckdb_url, unique_name, capsys):
    program = (
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree WITH "
        f"objective = 'multi:softprob', num_class = CHOICE(2) LABEL class INTO {unique_name};"
    )
    assert main(["-e", program, "--datasource", iris_duckdb_url]) == 1
    error = capsys.readouterr().err
    assert f"no trial of the search for {unique_name} has a validation accuracy" in error
    assert "the first trial's error: num_class is 2, but the label has 3 classes" in error
    ds = connect(iris_duckdb_url)
    try:
        assert [name for name, _, _ in ModelStore(ds).list() if unique_name in name] == []
    finally:
        ds.close()


@pytest.mark.keras
def test_a_keras_search(iris_duckdb_url, unique_name, capsys):
    pytest.importorskip("tensorflow")
    model = f"{unique_name}_m"
    program = (
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 3, "
        "model.hidden_units = CHOICE([8], [16, 8]), optimizer.learning_rate = "
        "LOG_UNIFORM(0.01, 0.1), train.epoch = 20, train.batch_size = 16, search.trials = 2 "
        "COLUMN sepal_length, sepal_width, petal_length, petal_width "
        f"LABEL class INTO {model};"
        f"SELECT * FROM iris_test TO PREDICT {unique_name}_pred.class USING {model};"
    )
    assert main(["-e", program, "--datasource", iris_duckdb_url]) == 0, capsys.readouterr().err
    ds = connect(iris_duckdb_url)
    try:
        rows = ds.execute(
            f"SELECT model_hidden_units, validation_accuracy FROM {model}_trials ORDER BY trial"
        ).rows
        stored = ModelStore(ds).load(model)
        accuracy = _accuracy(ds, f"{unique_name}_pred")
    finally:
        ds.close()
    assert len(rows) == 2 and {r[0] for r in rows} <= {"[8]", "[16, 8]"}
    assert stored.metadata["metrics"]["validation_accuracy"] == max(r[1] for r in rows)
    assert accuracy >= 0.8, f"accuracy {accuracy:.3f} on held-out rows"


def test_the_python_program_maps_the_trials_and_waits_for_the_search():
    statements = analyze(parse(SEARCH.format(model="m", table="t") + "SELECT * FROM t;"))
    workflow = to_workflow(statements, "p")
    trials, best, select = workflow.steps
    assert trials.name == "s1-train-m-trials" and trials.template == "trial"
    assert trials.items == tuple(trial_items(statements[0]))
    assert trials.items[0] == {
        "trial": "0",
        "eta": "0.1",
        "max_depth": "1",
        "train.num_boost_round": "4",
    }
    assert best.after == (trials.name,) and select.after == (best.name,)
    source = to_python(statements, "p")
    namespace: dict = {}
    exec(
        compile(source.replace('if __name__ == "__main__":', "if False:"), "p.py", "exec"),
        namespace,
    )
    assert [s.name for s in namespace["workflow"].steps] == [s.name for s in workflow.steps]


# Katib on Argo ----------------------------------------------------------------------------------


def _katib_documents(text: str) -> tuple[dict, dict, dict]:
    from test_argo import arguments, tasks, validated

    document = validated(to_argo_yaml(analyze(parse(text)), "prog"))
    found = {task["template"]: task for task in tasks(document).values()}
    experiment = json.loads(arguments(found["resource"])["manifest"])
    return document, found, experiment


def test_the_argo_workflow_runs_a_katib_experiment_then_keeps_the_best():
    _, found, experiment = _katib_documents(SEARCH.format(model="m", table="t"))
    assert found["resource"]["name"] == "s1-train-m-trials"
    assert found["search"]["name"] == "s1-train-m"
    assert found["search"]["dependencies"] == ["s1-train-m-trials"]
    spec = experiment["spec"]
    assert experiment["metadata"] == {"generateName": "prog-s1-train-m-"}
    assert spec["objective"] == {"type": "maximize", "objectiveMetricName": "validation_accuracy"}
    assert spec["algorithm"] == {"algorithmName": "grid"}
    assert spec["maxTrialCount"] == 12 and spec["parallelTrialCount"] == 3
    assert spec["parameters"] == [
        {
            "name": "max_depth",
            "parameterType": "categorical",
            "feasibleSpace": {"list": ["1", "3"]},
        },
        {"name": "eta", "parameterType": "categorical", "feasibleSpace": {"list": ["0.1", "0.5"]}},
        {
            "name": "train_num_boost_round",
            "parameterType": "int",
            "feasibleSpace": {"min": "4", "max": "6", "step": "1"},
        },
    ]
    assert spec["metricsCollectorSpec"] == {"collector": {"kind": "StdOut"}}
    (container,) = spec["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["python", "-m", "sqlml.runtime.step"]
    trial = {
        "trial": "${trialParameters.trialName}",
        "max_depth": "${trialParameters.max_depth}",
        "eta": "${trialParameters.eta}",
        "train.num_boost_round": "${trialParameters.train_num_boost_round}",
    }
    assert container["env"] == [
        {"name": "SQLML_TRIAL", "value": json.dumps(trial, separators=(",", ":"))},
        {
            "name": "SQLML_DATASOURCE",
            "valueFrom": {"secretKeyRef": {"name": "sqlml-datasource", "key": "url"}},
        },
    ]


def test_the_katib_manifests_validate_strictly():
    katib_models = import_or_skip("kubeflow.katib.models")
    from kubernetes.client import models as kubernetes_models
    from test_kubeflow import assert_valid, build

    from sqlml.steps.kubeflow import to_plain

    program = (
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.hidden_units = CHOICE([8], [16, 8]),"
        " optimizer.learning_rate = LOG_UNIFORM(1e-4, 1e-1), train.epoch = INT_RANGE(1, 3),"
        " search.trials = 6, search.parallel = 2, search.seed = 9 LABEL y INTO m;"
    )
    _, _, experiment = _katib_documents(program)
    assert_valid(experiment, "V1beta1Experiment", katib_models)
    trial = experiment["spec"]["trialTemplate"]["trialSpec"]
    assert to_plain(build(trial, "V1Job", kubernetes_models)) == trial
    spec = experiment["spec"]
    assert spec["algorithm"] == {
        "algorithmName": "random",
        "algorithmSettings": [{"name": "random_state", "value": "9"}],
    }
    assert spec["parameters"][1] == {
        "name": "optimizer_learning_rate",
        "parameterType": "double",
        "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"},
    }
    references = {p["name"]: p["reference"] for p in spec["trialTemplate"]["trialParameters"]}
    assert references == {
        "trialName": "${trialSpec.Name}",
        "model_hidden_units": "model_hidden_units",
        "optimizer_learning_rate": "optimizer_learning_rate",
        "train_epoch": "train_epoch",
    }


def test_a_search_whose_metric_the_data_decides_cannot_go_to_katib():
    program = "SELECT * FROM t TO TRAIN xgboost.gbtree WITH eta = CHOICE(0.1) LABEL y INTO m;"
    with pytest.raises(KubernetesError, match="metric the data decides"):
        to_argo_yaml(analyze(parse(program)), "prog")


def test_katib_trials_and_the_last_step_run_the_step_entry_point(
    iris_duckdb_url, unique_name, tmp_path
):
    """What the pods do: Katib fills each trial's placeholders and, to collect its metrics,
    runs the trial's command through ``sh -c``; the kubelet expands the arguments; the trial
    trains and prints its metrics; the last step keeps the best and writes the trials table."""
    model = f"{unique_name}_m"
    text = SEARCH.format(model=model, table=f"{model}_trials").replace(" = grid", " = random")
    _, found, experiment = _katib_documents(text)
    template = experiment["spec"]["trialTemplate"]["trialSpec"]
    trials = {"prog-s1-ab12cd34": ("1", "0.5", "5"), "prog-s1-ef56gh78": ("3", "0.1", "4")}
    for name, (depth, eta, rounds) in trials.items():
        values = {"trialName": name, "max_depth": depth, "eta": eta}
        job = katib_fill(template, values | {"train_num_boost_round": rounds})
        (container,) = job["spec"]["template"]["spec"]["containers"]
        env = container_env(container, {"sqlml-datasource": iris_duckdb_url})
        metrics = tmp_path / f"{name}.log"
        command = container_process(
            {"command": katib_wrap(container, str(metrics))}, env
        )  # the kubelet expands the wrapped command line too
        python = str(Path(sys.executable).parent)
        environment = env | {"PATH": f"{python}:{os.environ['PATH']}", "SQLML_CACHE": "off"}
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, metrics.read_text()
        assert re.search(r"^validation_accuracy=[\d.]+$", metrics.read_text(), re.M)
    from test_argo import arguments

    search = ir.from_argument(arguments(found["search"])["ir"])
    ds = connect(iris_duckdb_url)
    try:
        execute(search, ds)
        rows = ds.execute(f"SELECT trial, max_depth, eta FROM {model}_trials ORDER BY trial").rows
        stored = ModelStore(ds).load(model)
    finally:
        ds.close()
    assert rows == [(0, 1, 0.5), (1, 3, 0.1)]  # numbered by trial name
    assert stored.metadata["search"]["best_trial"] in (0, 1)


def test_compile_writes_the_katib_search_with_the_cli(tmp_path: Path):
    source = tmp_path / "p.sql"
    source.write_text(SEARCH.format(model="m", table="t"))
    out = tmp_path / "p.yaml"
    assert main(["compile", str(source), "--target", "argo", "-o", str(out)]) == 0
    assert (
        "kubeflow.org/v1beta1"
        in yaml.safe_load(out.read_text())["spec"]["templates"][0]["dag"]["tasks"][0]["arguments"][
            "parameters"
        ][0]["value"]
    )
