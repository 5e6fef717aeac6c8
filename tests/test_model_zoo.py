"""The model zoo: XGBClassifier/XGBRegressor, ranking, the Keras estimators, user models,
and predict.extra_outputs; each trained and measured on held-out rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_feature_columns import churn_columns

from sqlml import ir
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.metric_values import ranker_metrics
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime.in_memory import split_queries
from sqlml.semantics import analyze
from sqlml.statements.predict.handler import probability_columns

TESTS = Path(__file__).resolve().parent
MEASURES = "sepal_length, sepal_width, petal_length, petal_width"


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def read(url: str, query: str) -> dict[str, np.ndarray]:
    ds = connect(url)
    try:
        return ds.read(query)
    finally:
        ds.close()


def stored(url: str, model: str) -> StoredModel:
    ds = connect(url)
    try:
        return ModelStore(ds).load(model)
    finally:
        ds.close()


def check(text: str) -> ir.Statement:
    (statement,) = analyze(parse(text))
    return statement


# Checks -----------------------------------------------------------------------------------------


def test_for_targets_are_the_combined_estimators_inputs():
    statement = check(
        "SELECT * FROM t TO TRAIN DNNLinearCombinedClassifier "
        "COLUMN a, INDICATOR(b) FOR linear_feature_columns COLUMN EMBEDDING(c, 4) FOR DNN "
        "COLUMN d LABEL y INTO m;"
    )
    assert [(f.name, f.target) for f in statement.features] == [
        ("a", "linear"),
        ("INDICATOR(b)", "linear"),
        ("EMBEDDING(c)", "dnn"),
        ("d", None),
    ]
    assert statement.task == "classifier"
    assert statement.attributes["architecture"] == "dnn_linear_combined"
    assert ir.from_dict(statement.to_dict()) == statement
    old = statement.to_dict()
    for feature in old["features"]:
        del feature["target"]  # the IR of a version before COLUMN ... FOR
    assert all(f.target is None for f in ir.from_dict(old).features)


@pytest.mark.parametrize(
    ("text", "at", "message", "hint"),
    [
        ("DNNClassifier COLUMN a FOR dnn", "dnn",
         "COLUMN ... FOR is for estimators with several inputs; DNNClassifier has one",
         "remove FOR <target>; the DNNLinearCombined estimators take FOR "
         "linear_feature_columns and FOR dnn_feature_columns"),
        ("DNNLinearCombinedRegressor COLUMN a FOR dnn_feature_column", "dnn_",
         "DNNLinearCombinedRegressor has no input dnn_feature_column",
         "did you mean dnn_feature_columns? its inputs are linear_feature_columns, "
         "dnn_feature_columns, linear, dnn"),
        ("DNNLinearCombinedRegressor COLUMN a FOR dnn", "a FOR",
         "DNNLinearCombinedRegressor's linear part has no features",
         "add COLUMN ... FOR linear_feature_columns, or list features without FOR to feed "
         "both parts"),
        ("XGBClassifier WITH objective = 'reg:squarederror'", "objective",
         "attribute objective must be one of 'binary:logistic'", None),
        ("XGBRegressor WITH num_class = 3", "num_class",
         "XGBRegressor has no attribute num_class", None),
        ("XGBRegressor WITH train.group_column = q", "train.group_column",
         "train.group_column is for ranking", None),
        ("XGBClassifier WITH train.group_column = q", "train.group_column",
         "XGBClassifier has no attribute train.group_column", None),
        ("DNNRegressor WITH model.n_classes = 3", "model.n_classes",
         "DNNRegressor has no attribute model.n_classes", None),
        ("DNNLinearCombinedClassifier WITH model.hidden_units = [3]", "model.hidden_units",
         "DNNLinearCombinedClassifier has no attribute model.hidden_units",
         "did you mean model.dnn_hidden_units?"),
        ("user_models.NOT_A_FUNCTION", "user_models",
         "estimator user_models.NOT_A_FUNCTION: it names an object of type int, not a function",
         None),
        ("user_models.missing", "user_models", "unknown estimator user_models.missing", None),
        ("no_such_module.build", "no_such", "unknown estimator no_such_module.build", None),
        ("user_models.build_model WITH train.epochs = 1", "train.epochs",
         "user_models.build_model has no attribute train.epochs", "did you mean train.epoch?"),
    ],
)  # fmt: skip
def test_estimator_errors(monkeypatch, text, at, message, hint):
    """``at``: the text in ``text`` the error points at."""
    monkeypatch.syspath_prepend(str(TESTS))
    prefix = "SELECT * FROM t TO TRAIN "
    with pytest.raises(CheckError) as caught:
        check(f"{prefix}{text} LABEL y INTO m;")
    error = caught.value
    assert (error.line, error.column) == (1, len(prefix) + text.index(at) + 1)
    assert error.message.startswith(message), error.message
    if hint:
        assert error.hint == hint


@pytest.mark.parametrize(
    ("estimator", "label", "rounds", "trees"),
    [
        ("XGBClassifier", "class", 3, 3),  # a tree per class and round
        ("xgboost.XGBClassifier", "class", 3, 3),
        ("XGBRegressor", "petal_width", 3, 1),
        ("xgboost.XGBRegressor", "petal_width", 3, 1),
        # XGBoost's random forests: n_estimators trees in one round.
        ("XGBRFRegressor", "petal_width", 1, 3),
    ],
)
def test_xgboost_estimators_take_the_scikit_learn_names(
    iris_duckdb_url, estimator, label, rounds, trees, capsys
):
    """learning_rate and n_estimators, as SQLFlow writes them, are XGBoost's eta and rounds
    (a forest's trees) on every XGBoost estimator."""
    from sqlml.models.xgboost.model import load

    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN {estimator} "
        f"WITH learning_rate = 0.25, n_estimators = 3, reg_lambda = 2, max_depth = 2 "
        f"LABEL {label} INTO sk;"
    )
    status, _, err = run(iris_duckdb_url, program, capsys)
    assert status == 0, err
    model = stored(iris_duckdb_url, "sk")
    params = model.metadata["params"]
    assert params["eta"] == 0.25 and params["lambda"] == 2.0
    assert not {"learning_rate", "n_estimators", "reg_lambda"} & set(params)
    booster = load(model.data)
    assert booster.num_boosted_rounds() == rounds
    assert len(booster.get_dump()) == rounds * trees


def test_user_model_attributes_pass_through(monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    statement = check(
        "SELECT * FROM t TO TRAIN user_models.build_model WITH model.hidden_units = [4, [2]], "
        "model.n_classes = 3, model.kind = 'x', train.epoch = 2 LABEL y INTO m;"
    )
    assert statement.family == "keras" and statement.task == "classifier"
    assert statement.attributes["model.hidden_units"] == [4, [2]]
    assert statement.attributes["model.kind"] == "x"
    assert statement.attributes["builder"] == "user_models.build_model"
    assert ir.from_dict(statement.to_dict()) == statement
    regressor = check("SELECT * FROM t TO TRAIN user_models.build_model LABEL y INTO m;")
    assert regressor.task == "auto"  # from the label: numbers are values, text classes
    # Issue 15: repeated with USING, a base model's own attribute is kept to compare with the
    # base's when it is loaded (it was refused before).
    continued = check(
        "SELECT * FROM t TO TRAIN user_models.build_model WITH model.kind = 1 "
        "LABEL y USING b INTO m;"
    )
    assert "model.kind" not in continued.attributes
    assert continued.repeated == {
        "model.kind": {"written": "model.kind", "value": 1, "line": 1, "column": 55}
    }


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("predict.extra_outputs = 'probabilities, logits'", "unknown extra output logits"),
        ("predict.extra_outputs = ' , '", "unknown extra output ' , '"),
    ],
)
def test_extra_outputs_are_checked(attributes, message):
    with pytest.raises(CheckError, match=message):
        check(f"SELECT * FROM t TO PREDICT p.y WITH {attributes} USING m;")
    statement = check(
        "SELECT * FROM t TO PREDICT p.y WITH predict.extra_outputs = 'Probabilities' USING m;"
    )
    assert statement.attributes["predict.extra_outputs"] == "probabilities"


def test_probability_column_names():
    assert probability_columns("c", ["setosa", "versicolor"]) == ["c_setosa", "c_versicolor"]
    assert probability_columns("c", [0, 1, 2]) == ["c_0", "c_1", "c_2"]
    assert probability_columns("c", [0.0, 1.0]) == ["c_0", "c_1"]
    assert probability_columns("c", [False, True]) == ["c_false", "c_true"]
    for unsafe in (["Yes", "No"], ["a b", "c"], ["a-b", "c"], [-1, 1], [0.5, 1.5], ["é", "e"]):
        assert probability_columns("c", unsafe) == ["c_prob_0", "c_prob_1"], unsafe
    assert probability_columns("c", ["x" * 62, "y"]) == ["c_prob_0", "c_prob_1"]  # too long


# Classifiers on iris, every database --------------------------------------------------------


CLASSIFIERS = {
    "LinearClassifier": (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN LinearClassifier "
        "WITH train.epoch = 30, train.batch_size = 8 LABEL class INTO {model};",
        "class",
        ["class_setosa", "class_versicolor", "class_virginica"],
        0.85,
    ),
    # Numeric labels are classes for XGBClassifier.
    "XGBClassifier": (
        f"SELECT {MEASURES}, CASE class WHEN 'setosa' THEN 0 WHEN 'versicolor' THEN 1 ELSE 2 "
        "END AS label FROM iris_train TO TRAIN XGBClassifier "
        "WITH max_depth = 3, train.num_boost_round = 20 LABEL label INTO {model};",
        "label",
        ["label_0", "label_1", "label_2"],
        0.9,
    ),
}


@pytest.mark.parametrize("estimator", list(CLASSIFIERS))
def test_classifiers_with_class_probabilities(iris_url, estimator, unique_name, capsys):
    train, result, columns, threshold = CLASSIFIERS[estimator]
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    program = train.format(model=model) + (
        f"SELECT id, {MEASURES} FROM iris_test TO PREDICT {table}.{result} "
        f"WITH predict.extra_outputs = 'probabilities' USING {model};"
    )
    status, _, err = run(iris_url, program, capsys)
    try:
        assert status == 0, err
        predicted = read(iris_url, f"SELECT * FROM {table} ORDER BY id")
        truth = read(iris_url, "SELECT class FROM iris_test ORDER BY id")["class"]
    finally:
        run(iris_url, f"DROP TABLE IF EXISTS {table}; DROP MODEL IF EXISTS {model};", capsys)
    assert list(predicted) == ["id", *MEASURES.split(", "), result, *columns]
    probabilities = np.column_stack([predicted[c] for c in columns]).astype(np.float64)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, atol=1e-5)
    classes = np.array(["setosa", "versicolor", "virginica"], dtype=object)
    most_probable = np.array(columns)[probabilities.argmax(axis=1)]
    assert (most_probable == [f"{result}_{c}" for c in predicted[result]]).all()
    accuracy = np.mean(classes[probabilities.argmax(axis=1)] == truth)
    assert accuracy >= threshold, accuracy


def test_extra_outputs_need_a_classifier(duckdb_url, capsys):
    program = (
        "CREATE TABLE d AS SELECT i AS x, 2 * i AS y FROM range(20) t(i);"
        "SELECT * FROM d TO TRAIN XGBRegressor WITH train.num_boost_round = 2 LABEL y INTO r;"
        "SELECT x FROM d TO PREDICT p.y WITH predict.extra_outputs = probabilities USING r;"
    )
    status, _, err = run(duckdb_url, program, capsys)
    assert status == 1
    assert (
        "1:185: error: r (XGBRegressor) offers no extra output probabilities; it offers none "
        "(it predicts numbers)"
    ) in err


# Regressors on a linear target ----------------------------------------------------------------


@pytest.fixture(scope="module")
def regression_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """reg_train (480 rows) and reg_test (120): y = 1000 + 300 x1 - 200 x2 + 50 x3 + noise
    (standard deviation 10; y's is about 370); and a count of rate exp(1 + 0.7 x1)."""
    url = f"duckdb:///{tmp_path_factory.mktemp('regression') / 'regression.duckdb'}"
    rng = np.random.default_rng(11)
    x = rng.normal(size=(600, 3))
    rate = np.exp(1 + 0.7 * x[:, 0])
    columns = {
        "id": np.arange(600),
        "x1": x[:, 0],
        "x2": x[:, 1],
        "x3": x[:, 2],
        "y": 1000 + 300 * x[:, 0] - 200 * x[:, 1] + 50 * x[:, 2] + rng.normal(0, 10, 600),
        "rate": rate,
        "n": rng.poisson(rate),
    }
    held_out = columns["id"] % 5 == 0
    ds = connect(url)
    ds.write_table(["reg_train"], {k: v[~held_out] for k, v in columns.items()})
    ds.write_table(["reg_test"], {k: v[held_out] for k, v in columns.items()})
    ds.close()
    return url


REGRESSORS = {
    "DNNRegressor": "DNNRegressor WITH model.hidden_units = [16], train.epoch = 30",
    "LinearRegressor": "LinearRegressor WITH train.epoch = 30",
    # The linear part sees x1 and x2, the network x3 and x1.
    "DNNLinearCombinedRegressor": "DNNLinearCombinedRegressor "
    "WITH model.dnn_hidden_units = [16], train.epoch = 30 "
    "COLUMN x2 FOR linear_feature_columns COLUMN x3 FOR dnn_feature_columns COLUMN x1",
    "XGBRegressor": "XGBRegressor WITH max_depth = 3, train.num_boost_round = 200, eta = 0.1",
    "xgboost.gblinear": "xgboost.gblinear WITH train.num_boost_round = 50, eta = 1",
}


@pytest.mark.parametrize("estimator", list(REGRESSORS))
def test_regressors_learn_a_linear_target(regression_url, estimator, capsys):
    """RMSE on held-out rows well below y's standard deviation (what predicting the mean
    gives): under a tenth of it, or 15% for trees, whose steps only approximate a line;
    noise alone gives 10."""
    program = (
        f"SELECT x1, x2, x3, y FROM reg_train TO TRAIN {REGRESSORS[estimator]} LABEL y INTO r;"
        "SELECT id, x1, x2, x3 FROM reg_test TO PREDICT reg_pred.y USING r;"
    )
    status, _, err = run(regression_url, program, capsys)
    assert status == 0, err
    predicted = read(regression_url, "SELECT y FROM reg_pred ORDER BY id")["y"]
    truth = read(regression_url, "SELECT y FROM reg_test ORDER BY id")["y"]
    assert predicted.dtype == np.float64
    rmse = float(np.sqrt(np.mean((predicted - truth) ** 2)))
    share = 0.15 if estimator == "XGBRegressor" else 0.1
    assert rmse < share * truth.std(), (rmse, truth.std())
    metadata = stored(regression_url, "r").metadata
    assert metadata["labels"]["task"] == "regressor"
    assert metadata["metrics"]["validation_r2"] > 0.98
    if estimator == "DNNLinearCombinedRegressor":
        targets = [(f["column"], f["target"]) for f in metadata["features"]]
        assert targets == [("x2", "linear"), ("x3", "dnn"), ("x1", None)]


def test_poisson_regressor_learns_the_rate(regression_url, capsys):
    program = (
        "SELECT x1, x2, x3, n FROM reg_train TO TRAIN XGBRegressor "
        "WITH objective = 'count:poisson', max_depth = 3, train.num_boost_round = 50 "
        "LABEL n INTO counts;"
        "SELECT id, x1, x2, x3 FROM reg_test TO PREDICT count_pred.n USING counts;"
    )
    status, _, err = run(regression_url, program, capsys)
    assert status == 0, err
    predicted = read(regression_url, "SELECT n FROM count_pred ORDER BY id")["n"]
    rate = read(regression_url, "SELECT rate FROM reg_test ORDER BY id")["rate"]
    assert np.sqrt(np.mean((predicted - rate) ** 2)) < 0.5 * rate.std()


# Wide and deep on the churn data ----------------------------------------------------------


def test_dnn_linear_combined_classifier_on_churn(duckdb_url, capsys):
    """The linear part gets the plan, contract and their cross; the network those and the
    rest. Churn depends on plan, contract and region together (a sum of a linear part
    without the region and a network without the contract could not learn it): 95% of it
    is learnable."""
    columns = churn_columns()
    held_out = columns["id"] % 5 == 0
    ds = connect(duckdb_url)
    ds.write_table(["churn_train"], {k: v[~held_out] for k, v in columns.items()})
    ds.write_table(["churn_test"], {k: v[held_out] for k, v in columns.items()})
    ds.close()
    program = """
        SELECT * FROM churn_train TO TRAIN DNNLinearCombinedClassifier
        WITH model.dnn_hidden_units = [32, 16], train.epoch = 20
        COLUMN INDICATOR(plan), contract, CROSS([plan, contract], 32) FOR linear_feature_columns
        COLUMN EMBEDDING(CATEGORY_ID(plan, 8), 4), INDICATOR(contract), region, tenure
          FOR dnn_feature_columns
        COLUMN charges
        LABEL churn INTO wide_deep;
        SELECT * FROM churn_test TO PREDICT churn_pred.churn
          WITH predict.extra_outputs = probabilities USING wide_deep;
    """
    status, _, err = run(duckdb_url, program, capsys)
    assert status == 0, err
    predicted = read(duckdb_url, "SELECT * FROM churn_pred ORDER BY id")
    truth = read(duckdb_url, "SELECT churn FROM churn_test ORDER BY id")["churn"]
    assert np.mean(predicted["churn"] == truth) >= 0.85
    np.testing.assert_allclose(predicted["churn_no"] + predicted["churn_yes"], 1, atol=1e-5)
    metadata = stored(duckdb_url, "wide_deep").metadata
    assert [f["target"] for f in metadata["features"]] == [
        *["linear"] * 3,
        *["dnn"] * 4,
        None,
    ]


# Ranking ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ranking_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """60 queries of 8 documents, rows shuffled; relevance 0-4 grows with ``signal``.

    Every fifth query is in ``part = 'test'``.
    """
    url = f"duckdb:///{tmp_path_factory.mktemp('ranking') / 'ranking.duckdb'}"
    rng = np.random.default_rng(3)
    rows = 480
    query = np.repeat(np.arange(60), 8)
    signal, noise = rng.normal(size=rows), rng.normal(size=rows)
    relevance = np.clip(np.round(1.2 * signal + 1.5 + 0.3 * rng.normal(size=rows)), 0, 4)
    order = rng.permutation(rows)
    ds = connect(url)
    ds.write_table(
        ["docs"],
        {
            "id": np.arange(rows),
            "query": np.array([f"q{q}" for q in query[order]], dtype=object),
            "part": np.where(query[order] % 5 == 0, "test", "train").astype(object),
            "signal": signal[order],
            "noise": noise[order],
            "relevance": relevance[order].astype(np.int64),
        },
    )
    ds.close()
    return url


@pytest.mark.parametrize(
    ("estimator", "objective"), [("xgboost.gbtree", "rank:ndcg"), ("XGBRegressor", "rank:pairwise")]
)
def test_rankers_put_the_relevant_documents_first(ranking_url, estimator, objective, capsys):
    program = f"""
        SELECT query, signal, noise, relevance FROM docs WHERE part = 'train'
        TO TRAIN {estimator}
        WITH objective = '{objective}', train.group_column = query, train.num_boost_round = 20
        LABEL relevance INTO ranker;
        SELECT id, query, signal, noise FROM docs WHERE part = 'test'
        TO PREDICT ranked.score USING ranker;
        SELECT * FROM docs WHERE part = 'test' TO EVALUATE ranker LABEL relevance INTO ranked_ndcg;
    """
    status, _, err = run(ranking_url, program, capsys)
    assert status == 0, err
    predicted = read(ranking_url, "SELECT id, query, score FROM ranked ORDER BY id")
    truth = read(ranking_url, "SELECT relevance FROM docs WHERE part = 'test' ORDER BY id")
    relevance = truth["relevance"]
    assert predicted["score"].dtype == np.float64
    queries = np.unique(predicted["query"])
    assert len(queries) == 12
    first_is_best = [
        relevance[mine][predicted["score"][mine].argmax()] == relevance[mine].max()
        for mine in (predicted["query"] == q for q in queries)
    ]
    assert np.mean(first_is_best) >= 0.75, first_is_best
    groups = np.unique(predicted["query"], return_inverse=True)[1]
    rng = np.random.default_rng(0)
    chance = np.mean(
        [ranker_metrics(relevance, rng.random(len(groups)), groups)["ndcg"] for _ in range(20)]
    )
    (ndcg,) = read(ranking_url, "SELECT * FROM ranked_ndcg").values()
    assert ndcg[0] >= 0.9 and ndcg[0] > chance + 0.15, (ndcg[0], chance)
    metadata = stored(ranking_url, "ranker").metadata
    assert metadata["rows"] + metadata["validation"]["rows"] == 384
    assert metadata["validation"]["rows"] % 8 == 0  # whole queries held out
    assert metadata["metrics"]["validation_ndcg"] > chance
    assert [f["column"] for f in metadata["features"]] == ["signal", "noise"]


def test_ranking_errors(ranking_url, capsys):
    base = (
        "SELECT query, signal, relevance FROM docs TO TRAIN xgboost.gbtree "
        "WITH objective = '{objective}', train.group_column = {group} LABEL relevance INTO bad;"
    )
    cases = [
        ("rank:ndcg", "nope", "train.group_column nope is not in the result of the SELECT"),
        ("rank:map", "query", "XGBoost: map can only be used with binary labels."),
    ]
    for objective, group, message in cases:
        status, _, err = run(ranking_url, base.format(objective=objective, group=group), capsys)
        assert status == 1
        assert message in err, err
    assert "hint: rank:map takes relevance 0 or 1" in err


def test_query_split_holds_out_whole_queries():
    groups = np.repeat([3, 1, 2, 0], [2, 3, 1, 4])
    kept, held = split_queries(groups, 0.5, seed=0)
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(10))
    assert set(groups[kept]).isdisjoint(groups[held])
    assert len(set(groups[held])) == 2
    assert len(split_queries(groups[:2], 0.9, seed=0)[1]) == 0  # the one query trains


def test_ndcg():
    truth = np.array([3, 2, 0, 1, 0, 0])
    groups = np.array([0, 0, 0, 1, 1, 2])  # query 2 has no relevant row: left out
    assert ranker_metrics(truth, np.array([3, 2, 1, 5, 0, 1]), groups)["ndcg"] == 1
    worst = ranker_metrics(truth, np.array([1, 2, 3, 0, 5, 1]), groups)["ndcg"]
    ideal = 7 + 3 / np.log2(3)
    assert worst == pytest.approx((3 / np.log2(3) + 7 / 2) / ideal / 2 + 1 / np.log2(3) / 2)
    assert ranker_metrics(truth, np.zeros(6), groups)["ndcg"] == worst  # ties: worst order


# User models ----------------------------------------------------------------------------------


def test_user_model_trains_and_loads_without_its_code(iris_duckdb_url, monkeypatch, capsys):
    """The model a user's function builds is stored as plain Keras layers: a process that
    cannot import the function still predicts with it."""
    iris_url = iris_duckdb_url
    monkeypatch.syspath_prepend(str(TESTS))
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN user_models.build_model "
        "WITH model.hidden_units = [16, 8], train.epoch = 30, train.batch_size = 8 "
        "LABEL class INTO mine;"
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN user_models.build_keras_model "
        "WITH train.epoch = 30, train.batch_size = 8 LABEL class INTO theirs;"
    )
    status, _, err = run(iris_url, program, capsys)
    assert status == 0, err
    assert stored(iris_url, "mine").metadata["params"] == {"n_classes": 3}
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    predict = " ".join(
        f"SELECT id, {MEASURES} FROM iris_test TO PREDICT {m}_pred.class USING {m};"
        for m in ("mine", "theirs")
    )
    done = subprocess.run(
        [sys.executable, "-m", "sqlml", "-e", predict, "--datasource", iris_url],
        cwd=iris_url.removeprefix("duckdb:///").rsplit("/", 1)[0],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    truth = read(iris_url, "SELECT class FROM iris_test ORDER BY id")["class"]
    for model in ("mine", "theirs"):
        predicted = read(iris_url, f"SELECT class FROM {model}_pred ORDER BY id")["class"]
        assert np.mean(predicted == truth) >= 0.85, model


def test_user_regressor(regression_url, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(TESTS))
    program = (
        "SELECT x1, x2, x3, y FROM reg_train TO TRAIN user_models.build_model "
        "WITH train.epoch = 30 LABEL y INTO own;"
    )
    status, _, err = run(regression_url, program, capsys)
    assert status == 0, err
    metadata = stored(regression_url, "own").metadata
    assert metadata["labels"]["task"] == "regressor"
    assert metadata["metrics"]["validation_r2"] > 0.98


@pytest.mark.parametrize(
    ("builder", "message"),
    [
        ("build_with_lambda", "the model built by user_models.build_with_lambda holds a Lambda, "
         "which cannot be loaded without running code"),
        ("build_wrong_width", "user_models.build_wrong_width must return the Keras tensor of 1 "
         "scores per row, got shape (None, 2)"),
    ],
)  # fmt: skip
def test_user_models_that_cannot_be_stored(duckdb_url, monkeypatch, builder, message, capsys):
    monkeypatch.syspath_prepend(str(TESTS))
    program = (
        "CREATE TABLE d AS SELECT i AS x, 2 * i AS y FROM range(20) t(i);"
        f"SELECT * FROM d TO TRAIN user_models.{builder} LABEL y INTO m;"
    )
    status, _, err = run(duckdb_url, program, capsys)
    assert status == 1
    assert message in err, err
