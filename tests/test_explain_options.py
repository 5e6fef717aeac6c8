"""TO EXPLAIN as SQLFlow writes it: summary.* plot options, label_col, XGBoostExplainer, the
label-free ShapleyExplainer (its Shapley values add up), and a constant label."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.runtime.cancel import Token
from sqlml.runtime.explain_plot import Summary, drawn_type
from sqlml.runtime.features_apply import Categorical, FeatureArrays
from sqlml.runtime.shapley import shapley_values

# y depends on x1 only; x2 and x3 are noise
DATA = (
    "CREATE TABLE d AS SELECT (i * 37) % 101 / 10.0 AS x1, (i * 7919) % 97 / 10.0 AS x2, "
    "(i * 104729) % 89 / 10.0 AS x3, (i * 37) % 101 / 10.0 * 3 AS y, "
    "CASE WHEN (i * 37) % 101 < 50 THEN 1 ELSE 0 END AS c FROM range(300) t(i);"
)
XGB = (
    "SELECT x2, x3, x1, y FROM d TO TRAIN xgboost.gbtree "
    "WITH objective = 'reg:squarederror', train.num_boost_round = 20 LABEL y INTO xg;"
)


def run(tmp_path: Path, url: str, program: str, capsys) -> tuple[int, str, str]:
    """Run ``program`` from a file in ``tmp_path / 'program'``."""
    folder = tmp_path / "program"
    folder.mkdir(exist_ok=True)
    (folder / "p.sql").write_text(program, encoding="utf-8")
    status = main(["run", str(folder / "p.sql"), "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def ranked(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("feature,")))
    return [line.split(",")[0] for line in lines[start + 1 : start + 4]]


def arrays(numbers: np.ndarray, ids: np.ndarray | None = None) -> FeatureArrays:
    """Features of plain numbers, and one category (the last feature) when ``ids``."""
    width = numbers.shape[1]
    names = [f"f{j}" for j in range(width)]
    categoricals = []
    if ids is not None:
        names.append("cat")
        categoricals.append(
            Categorical(width, ids[:, None].astype(np.int32), np.ones((len(ids), 1), "f4"), 4, "id")
        )
    return FeatureArrays(
        names=names,
        numbers=numbers.astype(np.float32),
        owners=np.arange(width),
        categoricals=categoricals,
        targets=[None] * len(names),
        column_types={},
    )


def model(features: FeatureArrays) -> np.ndarray:
    """A model with an interaction and a category: two outputs."""
    x = features.numbers.astype(np.float64)
    cat = features.categoricals[0].ids[:, 0].astype(np.float64)
    first = 2 * x[:, 0] + x[:, 1] * x[:, 2] + np.sin(x[:, 3]) + cat * x[:, 0]
    return np.column_stack([first, -(x[:, 4] ** 2)])


@pytest.mark.parametrize("permutations", [10, 200])  # sampled orders, all 120 orders
def test_shapley_values_add_up_to_the_output_minus_its_expectation(permutations):
    rng = np.random.default_rng(0)
    features = arrays(rng.normal(size=(12, 5)), rng.integers(0, 4, 12))
    background = features.take(np.arange(0, 12, 2))
    values, expected = shapley_values(model, features, background, permutations, 1, Token())
    assert values.shape == (12, 2, 6)
    np.testing.assert_allclose(values.sum(axis=2), model(features) - expected, atol=1e-9)
    np.testing.assert_allclose(expected, model(background).mean(axis=0))
    assert np.all(values[:, 1, :4] == 0) and np.all(values[:, 1, 5] == 0)  # output 2: f4 only
    again, _ = shapley_values(model, features, background, permutations, 1, Token())
    np.testing.assert_array_equal(values, again)  # deterministic with a seed


def test_exact_shapley_values_of_a_linear_model():
    rng = np.random.default_rng(1)
    features = arrays(rng.normal(size=(8, 3)))
    w = np.array([3.0, -1.0, 0.5])

    def linear(f: FeatureArrays) -> np.ndarray:
        return (f.numbers.astype(np.float64) @ w)[:, None]

    values, _ = shapley_values(linear, features, features, 6, 0, Token())
    mean = features.numbers.astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(values[:, 0, :], w * (features.numbers - mean), atol=1e-5)


def test_plot_types_sqlml_draws_otherwise_say_why():
    assert drawn_type(Summary(), False, True) == ("dot", None)
    assert drawn_type(Summary(), True, True) == ("bar", None)
    assert drawn_type(Summary(plot_type="violin"), False, True) == ("violin", None)
    kind, why = drawn_type(Summary(plot_type="layered_violin"), False, True)
    assert kind == "violin" and "layered" in why
    kind, why = drawn_type(Summary(plot_type="dot"), True, True)
    assert kind == "bar" and "per class" in why
    kind, why = drawn_type(Summary(plot_type="dot"), False, False)
    assert kind == "bar" and "one importance per feature" in why


def test_xgboost_explainers_rank_x1_first(duckdb_url, tmp_path, capsys):
    program = DATA + XGB
    for explainer in ("TreeExplainer", "XGBoostExplainer", "ShapleyExplainer"):
        program += f"SELECT x1, x2, x3 FROM d LIMIT 40 TO EXPLAIN xg USING {explainer};"
    program += (
        "SELECT x1, x2, x3 FROM d TO EXPLAIN xg WITH explain.max_rows = 30 USING ShapleyExplainer;"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    tables = out.split("feature,")[1:]
    assert len(tables) == 4
    assert "ShapleyExplainer explains 30 of the 300 rows, drawn at random" in err
    for table in tables:
        assert table.splitlines()[1].startswith("x1,")
    assert tables[1].splitlines()[0] == "importance,fscore"  # XGBoostExplainer: gain, splits


def test_xgboost_explainer_refuses_a_linear_model_which_tree_explainer_explains(
    duckdb_url, tmp_path, capsys
):
    program = DATA + (
        "SELECT x2, x3, x1, y FROM d TO TRAIN xgboost.gblinear "
        "WITH objective = 'reg:squarederror', train.num_boost_round = 20 LABEL y INTO lin;\n"
        "SELECT * FROM d TO EXPLAIN lin USING TreeExplainer;\n"
        "SELECT * FROM d TO EXPLAIN lin USING XGBoostExplainer;\n"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 1
    assert ranked(out)[0] == "x1"  # TreeExplainer: SHAP values of the linear model
    assert "p.sql:3:1: error: XGBoostExplainer ranks features by the gain of their splits, " in err
    assert "use TreeExplainer" not in err and "explain it with TreeExplainer" in err
    assert "internal error" not in err and "Traceback" not in err


def test_summary_options_draw_different_plots(duckdb_url, tmp_path, capsys):
    options = {
        "dot": "summary.plot_type = dot",
        "bar": "summary.plot_type = 'bar'",
        "violin": "summary.plot_type = 'violin', summary.alpha = 0.5",
        "decision": "summary.plot_type = 'decision'",
        "unsorted": "summary.sort = FALSE",
        "top1": "summary.max_display = 1, summary.title = 'x1 only'",
        "faint": "summary.alpha = 0.2, summary.color_bar = FALSE",
        "layered": "summary.plot_type = 'layered_violin'",
    }
    program = DATA + XGB
    for name, given in options.items():
        program += (
            f"SELECT x1, x2, x3 FROM d LIMIT 60 TO EXPLAIN xg "
            f"WITH {given}, explain.plot = '{name}.png' USING TreeExplainer;"
        )
    program += "SELECT x1, x2, x3 FROM d LIMIT 60 TO EXPLAIN xg WITH summary.plot_type = bar;"
    status, _, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    folder = tmp_path / "program"
    images = {name: (folder / f"{name}.png").read_bytes() for name in options}
    assert len(set(images.values())) == len(images)  # each option changes the plot
    assert (folder / "xg_explain.png").exists()  # summary.* without explain.plot
    warned = rf"^{re.escape(str(folder / 'p.sql'))}:\d+:\d+: warning: TO EXPLAIN: .*"
    assert re.search(warned + "'layered_violin': drawn as a violin plot", err, re.M), err


def test_constant_label_refused_by_permutation_explainer(duckdb_url, tmp_path, capsys):
    program = DATA + (
        "SELECT x1, x2, x3, c FROM d TO TRAIN xgboost.gbtree WITH objective = "
        "'binary:logistic', train.num_boost_round = 5 LABEL c INTO cl;"
        "SELECT x1, x2, x3, c FROM d WHERE c = 1 TO EXPLAIN cl USING ShapleyExplainer;"
        "SELECT x1, x2, x3, c FROM d WHERE c = 1 TO EXPLAIN cl USING PermutationExplainer;"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 1
    assert ranked(out)[0] == "x1"  # ShapleyExplainer needs no label
    assert "PermutationExplainer scores cl against its label c, which is 1 in every row" in err
    assert "use ShapleyExplainer" in err and "Traceback" not in err


def test_label_col_names_the_permutation_label(duckdb_url, tmp_path, capsys):
    program = DATA + (
        "CREATE TABLE e AS SELECT x1, x2, x3, y AS target FROM d;"
        + XGB
        + "SELECT * FROM e TO EXPLAIN xg WITH label_col = target USING PermutationExplainer;"
        "SELECT * FROM e TO EXPLAIN xg WITH label_col = target INTO r;"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    assert ranked(out)[0] == "x1"
    assert "label_col is not used: TreeExplainer explains the model's output" in err


@pytest.mark.keras
def test_keras_dnn_explained_without_a_label(duckdb_url, tmp_path, capsys):
    program = DATA + (
        "SELECT x1, x2, x3, y FROM d TO TRAIN DNNRegressor WITH model.hidden_units = [8], "
        "train.epoch = 20, train.batch_size = 16 LABEL y INTO k;"
        "SELECT x1, x2, x3 FROM d LIMIT 20 TO EXPLAIN k WITH explain.background = 10;"
        "SELECT x1, x2, x3 FROM d LIMIT 20 TO EXPLAIN k USING TreeExplainer;"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    tables = out.split("feature,")[1:]
    assert [table.splitlines()[1].split(",")[0] for table in tables] == ["x1", "x1"]
    assert "TreeExplainer explains tree models" in err and "ShapleyExplainer instead" in err


def test_a_model_without_a_label_is_explained_by_its_output(duckdb_url, tmp_path, capsys):
    program = (
        "CREATE TABLE p AS SELECT (i % 3) * 10 + (i * 7 % 5) / 5.0 AS x, "
        "(i * 13 % 7) / 7.0 AS y FROM range(90) t(i);"
        "SELECT x, y FROM p TO TRAIN KMeans WITH model.n_clusters = 3 INTO clusters;"
        "SELECT x, y FROM p LIMIT 10 TO EXPLAIN clusters;"
        "SELECT x, y FROM p LIMIT 10 TO EXPLAIN clusters USING PermutationExplainer;"
    )
    status, out, err = run(tmp_path, duckdb_url, program, capsys)
    assert status == 1
    assert sorted(ranked(out)[:2]) == ["x", "y"]  # explained without a label
    assert "PermutationExplainer scores a model against its label; clusters was trained " in err
    assert "Traceback" not in err
