"""Validation metrics stored with every trained model, and TO TRAIN ... USING a base model."""

from __future__ import annotations

import numpy as np
import pytest

from sqlml import ir
from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.models.store import ModelStore, StoredModel
from sqlml.models.xgboost.model import load
from sqlml.plan import dependencies
from sqlml.runtime.in_memory import split
from sqlml.semantics import analyze

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
XGBOOST = (
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH max_depth = 4, train.num_boost_round = {rounds}{more} LABEL class {using}INTO {model};"
)
# The class column with setosa renamed: a class the models do not know.
RENAMED = "CASE WHEN class = 'setosa' THEN 'other' ELSE class END AS class"


def xgboost(model: str, rounds: int = 20, more: str = "", using: str | None = None) -> str:
    """An XGBoost iris training statement; ``more``: further WITH attributes."""
    return XGBOOST.format(
        model=model, rounds=rounds, more=more, using=f"USING {using} " if using else ""
    )


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def models(iris_url, unique_name, capsys):
    """The iris datasource URL and a function naming models, all dropped afterwards."""
    names: list[str] = []

    def name(suffix: str) -> str:
        names.append(f"{unique_name}_{suffix}")
        return names[-1]

    yield iris_url, name
    drops = " ".join(f"DROP MODEL IF EXISTS {n};" for n in names)
    if drops:
        main(["-e", drops, "--datasource", iris_url])
    capsys.readouterr()


def stored(url: str, model: str) -> StoredModel:
    ds = connect(url)
    try:
        return ModelStore(ds).load(model)
    finally:
        ds.close()


def validation_metrics(metadata: dict) -> dict[str, float]:
    return {k: v for k, v in metadata["metrics"].items() if k.startswith("validation_")}


# Validation -----------------------------------------------------------------------------------


def test_split_is_seeded_stratified_and_keeps_a_training_row_per_class():
    y = np.repeat(np.arange(3), [40, 40, 1]).astype(np.int32)
    kept, held = split(y, True, 0.2, seed=0)
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(len(y)))
    assert np.bincount(y[held], minlength=3).tolist() == [8, 8, 0]
    again = split(y, True, 0.2, seed=0)
    assert np.array_equal(held, again[1]) and np.array_equal(kept, again[0])
    assert not np.array_equal(held, split(y, True, 0.2, seed=1)[1])
    assert len(split(np.zeros(10, np.float32), False, 0.9, seed=0)[1]) == 9
    assert len(split(np.zeros(1, np.float32), False, 0.5, seed=0)[1]) == 0


def test_held_out_rows_give_reproducible_validation_metrics(models, capsys):
    url, name = models
    first, second = name("a"), name("b")
    status, _, err = run(url, xgboost(first) + xgboost(second), capsys)
    assert status == 0, err
    assert f"trained {first} (xgboost.gbtree) on 96 rows, validated on 24 held-out rows" in err
    meta = stored(url, first).metadata
    assert meta["rows"] == 96
    assert meta["validation"] == {"split": 0.2, "seed": 0, "rows": 24}
    assert meta["base_model"] is None
    metrics = validation_metrics(meta)
    assert set(metrics) == {
        f"validation_{m}" for m in ("accuracy", "precision", "recall", "f1", "auc", "log_loss")
    }
    assert metrics["validation_accuracy"] >= 0.85
    assert "train_mlogloss" in meta["metrics"]
    assert validation_metrics(stored(url, second).metadata) == metrics
    status, out, _ = run(url, f"DESCRIBE MODEL {first};", capsys)
    assert "validation_accuracy" in out


def test_validation_select_metrics_match_to_evaluate(models, unique_name, capsys):
    url, name = models
    model, table = name("m"), f"{unique_name}_eval"
    program = xgboost(model, more=', validation.select = "SELECT * FROM iris_test;"') + (
        f"SELECT * FROM iris_test TO EVALUATE {model} LABEL class INTO {table};"
    )
    status, _, err = run(url, program, capsys)
    assert status == 0, err
    assert "on 120 rows, validated on 30 validation.select rows" in err
    meta = stored(url, model).metadata
    assert meta["validation"] == {"select": "SELECT * FROM iris_test", "rows": 30}
    ds = connect(url)
    try:
        result = ds.execute(f"SELECT * FROM {table}")
        ds.execute(f"DROP TABLE {table}")
    finally:
        ds.close()
    evaluated = dict(zip(result.columns, result.rows[0], strict=True))
    assert validation_metrics(meta) == pytest.approx(
        {f"validation_{k}": v for k, v in evaluated.items()}, rel=1e-6
    )


def test_regressor_validation_and_no_validation(models, capsys):
    url, name = models
    regressor, plain = name("r"), name("p")
    program = (
        f"SELECT sepal_width, petal_length, petal_width, sepal_length FROM iris_train "
        f"TO TRAIN xgboost.gbtree WITH validation.seed = 3 LABEL sepal_length INTO {regressor};"
        + xgboost(plain, more=", validation.split = 0")
    )
    status, _, err = run(url, program, capsys)
    assert status == 0, err
    metrics = validation_metrics(stored(url, regressor).metadata)
    assert set(metrics) == {"validation_mae", "validation_mse", "validation_rmse", "validation_r2"}
    assert metrics["validation_rmse"] < 0.6
    meta = stored(url, plain).metadata
    assert meta["rows"] == 120 and meta["validation"] is None
    assert validation_metrics(meta) == {}


@pytest.mark.parametrize(
    ("select", "line", "column", "message"),
    [
        ("SELECT * FRM iris_test", 2, 40, "SQL syntax error near 'iris_test'"),
        ("\n  SELECT * FROM iris_test WHERE (", 3, 33, "SQL syntax error near '('"),
        ("DROP TABLE iris_test", 2, 27, "this query must be a single SELECT"),
    ],
)
def test_bad_validation_select_is_located(duckdb_url, select, line, column, message, capsys):
    program = f'SELECT * FROM t TO TRAIN xgboost.gbtree\nWITH validation.select = "{select}"'
    status, _, err = run(duckdb_url, program + " LABEL y INTO m;", capsys)
    assert status == 1
    assert err.startswith(f"<-e>:{line}:{column}: error: {message}"), err


def test_validation_select_may_end_with_a_semicolon():
    program = (
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH validation.select = "
        "\"SELECT * FROM v WHERE c <> ';'; -- the end\" LABEL y INTO m;"
    )
    (statement,) = analyze(parse(program))
    assert statement.attributes["validation.select"] == "SELECT * FROM v WHERE c <> ';'"


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ("SELECT * FROM iris_test WHERE 1 = 0", "validation.select: the SELECT returned no rows"),
        (f"SELECT {MEASURES} FROM iris_test", "LABEL column class is not in the result of "),
        (
            "SELECT sepal_length, class FROM iris_test",
            "feature column sepal_width, petal_length, petal_width is not in the result of "
            "validation.select",
        ),
        (
            f"SELECT {MEASURES}, {RENAMED} FROM iris_test",
            "LABEL column class of validation.select has classes the model does not know: 'other'",
        ),
    ],
)
def test_validation_select_rows_that_do_not_fit(models, select, message, capsys):
    url, name = models
    program = xgboost(name("m"), rounds=2, more=f', validation.select = "{select}"')
    status, _, err = run(url, program, capsys)
    assert status == 1
    assert message in err, err


# USING a base model ---------------------------------------------------------------------------


def test_using_continues_an_xgboost_model(models, capsys):
    url, name = models
    base, continued = name("base"), name("more")
    program = xgboost(base, rounds=10) + xgboost(continued, rounds=5, using=base)
    program += xgboost(base, rounds=3, using=base)  # a new version of the base itself
    status, _, err = run(url, program, capsys)
    assert status == 0, err
    assert f"trained {continued} (xgboost.gbtree) from {base} on 96 rows" in err
    rebased, more = stored(url, base), stored(url, continued)
    assert load(more.data).num_boosted_rounds() == 15
    assert more.metadata["base_model"] == {"name": base, "version": 1}
    assert more.metadata["features"] == rebased.metadata["features"]
    assert more.metadata["params"]["objective"] == "multi:softprob"
    assert validation_metrics(more.metadata)["validation_accuracy"] >= 0.85
    assert rebased.version == 2 and load(rebased.data).num_boosted_rounds() == 13
    assert rebased.metadata["base_model"] == {"name": base, "version": 1}


def test_using_continues_a_keras_model(models, capsys):
    url, name = models
    base, continued = name("dnn"), name("dnn_more")
    keras = (
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH train.epoch = {epochs}{more} "
        "COLUMN " + MEASURES + " LABEL class {using}INTO {model};"
    )
    program = keras.format(epochs=3, more=", model.hidden_units = [8]", using="", model=base)
    program += keras.format(epochs=2, more="", using=f"USING {base} ", model=continued)
    status, _, err = run(url, program, capsys)
    assert status == 0, err
    first, more = stored(url, base), stored(url, continued)
    assert more.metadata["base_model"] == {"name": base, "version": 1}
    assert more.metadata["params"] == first.metadata["params"] == {"n_classes": 3}
    assert more.metadata["attributes"]["model.hidden_units"] == [8]  # the base's architecture
    assert "validation_accuracy" in more.metadata["metrics"]
    assert more.data != first.data
    table = f"{base}_predicted"
    predict = f"SELECT * FROM iris_test TO PREDICT {table}.class USING {continued};"
    status, out, err = run(
        url, f"{predict} SELECT COUNT(*) AS n FROM {table}; DROP TABLE {table};", capsys
    )
    assert status == 0, err
    assert out.splitlines()[-1] == "30"


def test_using_a_missing_or_different_model_fails(models, capsys):
    url, name = models
    base = name("base")
    assert run(url, xgboost(base, rounds=2), capsys)[0] == 0
    cases = [
        (xgboost(name("x"), using=f"{base}_none"), f"USING {base}_none: model {base}_none does "),
        (
            xgboost(name("x"), using=base).replace("xgboost.gbtree", "xgboost.dart"),
            f"USING {base}: the base model was trained by xgboost.gbtree; "
            "TO TRAIN xgboost.dart cannot continue it",
        ),
        (
            xgboost(name("x"), using=base).replace(MEASURES, "sepal_length"),
            "feature column sepal_width, petal_length, petal_width is not in the result of ",
        ),
        (
            xgboost(name("x"), using=base).replace(", class", f", {RENAMED}"),
            "LABEL column class of the SELECT has classes the model does not know",
        ),
    ]
    for program, message in cases:
        status, _, err = run(url, program, capsys)
        assert status == 1
        assert message in err, err


def test_using_takes_the_base_models_attributes_repeated_only_when_equal(models, capsys):
    # Issue 15: SQLFlow allows a base model's own attributes repeated with USING when their
    # values are equal (this test asserted their refusal before).
    url, name = models
    base, more = name("base"), name("more")
    softprob = ", objective = 'multi:softprob'"
    assert run(url, xgboost(base, 2, softprob), capsys)[0] == 0
    status, _, err = run(url, xgboost(more, 2, softprob, base), capsys)
    assert status == 0, err
    assert stored(url, more).metadata["base_model"]["name"] == base
    different = xgboost(more, 2, ", objective = 'multi:softmax'", base)
    column = different.index("objective") + 1
    message = (
        'attribute objective = "multi:softmax" differs from the base model '
        f'{base}\'s "multi:softprob"'
    )
    status, _, err = run(url, different, capsys)
    assert status == 1
    assert err.startswith(f"<-e>:1:{column}: error: {message}"), err
    assert "leave objective out" in err
    ds = connect(url)
    try:
        errors = check_program(different, "duckdb", ds)
    finally:
        ds.close()
    assert [(e.line, e.column, e.message) for e in errors] == [(1, column, message)]


def test_check_finds_a_mismatched_base_model_and_validation_columns(duckdb_url):
    program = (
        "CREATE TABLE t AS SELECT 1 AS x, 'a' AS y;\n"
        "SELECT * FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;\n"
        "SELECT * FROM t TO TRAIN DNNClassifier LABEL y USING m INTO n;\n"
        "SELECT * FROM t TO TRAIN xgboost.gbtree LABEL y USING missing INTO n;\n"
    )
    ds = connect(duckdb_url)
    try:
        ds.execute("CREATE TABLE v AS SELECT 1 AS x")
        errors = check_program(
            program
            + "SELECT 1 AS x, 'a' AS y TO TRAIN xgboost.gbtree\n"
            + "  WITH validation.select = 'SELECT * FROM v' LABEL y INTO o;",
            "duckdb",
            ds,
        )
    finally:
        ds.close()
    assert [(e.line, e.message.split(": ")[0].split(" in ")[0]) for e in errors] == [
        (3, "USING m"),
        (4, "model missing does not exist"),
        (6, "column y is not"),  # at LABEL y
    ]
    assert errors[2].message == "column y is not in the result of validation.select"


def test_using_and_validation_select_are_dependencies():
    program = (
        "SELECT * FROM a TO TRAIN xgboost.gbtree LABEL y INTO base;\n"
        "CREATE TABLE v AS SELECT 1 AS x;\n"
        "SELECT * FROM a TO TRAIN xgboost.gbtree WITH validation.select = 'SELECT * FROM v'"
        " LABEL y USING base INTO more;\n"
    )
    statements = analyze(parse(program), "duckdb")
    graph = dependencies(statements, "duckdb")
    assert graph.io[statements[2].id].reads_tables == frozenset({"a", "v"})
    assert graph.io[statements[2].id].reads_models == frozenset({"base"})
    assert graph.after[statements[2].id] == (statements[0].id, statements[1].id)
    assert statements[2].base_model == "base"
    assert ir.from_dict(statements[2].to_dict()) == statements[2]
    old = {k: v for k, v in statements[0].to_dict().items() if k != "base_model"}
    assert ir.from_dict(old) == statements[0]
