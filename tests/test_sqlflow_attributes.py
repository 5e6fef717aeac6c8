"""The attributes SQLFlow users write (issue 15, item 3): aliases taken under sqlml's names,
Keras optimizers really used, XGBoost's scikit-learn names reaching the booster, attributes
sqlml takes but does not apply reported with a warning, and "did you mean" hints that know
SQLFlow's names."""

from __future__ import annotations

import io
import json
import zipfile

import h5py
import numpy as np
import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.models.store import ModelStore
from sqlml.semantics import analyze
from sqlml.semantics.estimators import ESTIMATORS, closest_estimator

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"


def check(text: str):
    return analyze(parse(text), "duckdb")[-1]


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def stored(url: str, model: str):
    ds = connect(url)
    try:
        return ModelStore(ds).load(model)
    finally:
        ds.close()


def keras_config(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return json.loads(archive.read("config.json"))


def train_iris(url: str, capsys, estimator: str, attributes: str, model: str = "m") -> str:
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN {estimator}\n"
        f"WITH train.epoch = 1, model.n_classes = 3,\n    {attributes}\n"
        f"COLUMN {MEASURES} LABEL class INTO {model};"
    )
    status, _, err = run(url, program, capsys)
    assert status == 0, err
    return err


@pytest.mark.parametrize(
    ("attributes", "optimizer", "config"),
    [
        (
            "model.optimizer = SGD, optimizer.momentum = 0.5, optimizer.nesterov = TRUE",
            "SGD",
            {"momentum": 0.5, "nesterov": True, "learning_rate": 0.01},
        ),
        ("model.optimizer = GradientDescentOptimizer", "SGD", {}),  # TensorFlow 1's name
        (
            'model.optimizer = "RMSProp", optimizer.rho = 0.8, optimizer.learning_rate = 0.05',
            "RMSprop",
            {"rho": 0.8, "learning_rate": 0.05},
        ),
        ("model.optimizer = Adagrad", "Adagrad", {}),
        ("optimizer.beta_1 = 0.8", "Adam", {"beta_1": 0.8}),  # Adam when omitted
    ],
)
def test_model_optimizer_is_the_keras_optimizer_trained_with(
    iris_duckdb_url, capsys, attributes, optimizer, config
):
    train_iris(iris_duckdb_url, capsys, "DNNClassifier", attributes)
    found = keras_config(stored(iris_duckdb_url, "m").data)["compile_config"]["optimizer"]
    assert found["class_name"] == optimizer
    for name, value in config.items():
        assert found["config"][name] == pytest.approx(value)


def test_wide_and_deep_takes_sqlflows_dnn_optimizer_and_warns_of_the_linear_one(
    iris_duckdb_url, capsys
):
    err = train_iris(
        iris_duckdb_url,
        capsys,
        "DNNLinearCombinedClassifier",
        "model.dnn_optimizer = SGD, dnn_optimizer.momentum = 0.3, model.linear_optimizer = Ftrl",
    )
    found = keras_config(stored(iris_duckdb_url, "m").data)["compile_config"]["optimizer"]
    assert found["class_name"] == "SGD"
    assert found["config"]["momentum"] == pytest.approx(0.3)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings == [
        "<-e>:3:62: warning: DNNLinearCombinedClassifier takes "
        "model.linear_optimizer but does not apply it: one optimizer, model.dnn_optimizer "
        "(or model.optimizer), trains the whole model"
    ]


def test_batch_norm_and_activation_fn_shape_the_network(iris_duckdb_url, capsys):
    train_iris(
        iris_duckdb_url,
        capsys,
        "DNNClassifier",
        'model.hidden_units = [4], model.batch_norm = TRUE, model.activation_fn = "tf.nn.tanh"',
    )
    layers = keras_config(stored(iris_duckdb_url, "m").data)["config"]["layers"]
    kinds = [layer["class_name"] for layer in layers]
    assert "BatchNormalization" in kinds
    dense = [layer["config"] for layer in layers if layer["class_name"] == "Dense"]
    assert dense[0]["activation"] == "tanh"


def test_an_attribute_sqlml_does_not_apply_is_warned_of_once_with_where_it_is(
    iris_duckdb_url, capsys
):
    err = train_iris(iris_duckdb_url, capsys, "DNNClassifier", "train.verbose = 1")
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings == [
        "<-e>:3:5: warning: DNNClassifier takes train.verbose but does not "
        "apply it: sqlml reports each epoch to its progress display"
    ]
    # Left out of what the trainer gets.
    assert "train.verbose" not in stored(iris_duckdb_url, "m").metadata["attributes"]


def test_xgboost_scikit_learn_names_reach_the_booster(iris_duckdb_url, capsys):
    program = (
        "SELECT * FROM iris_train WHERE class <> 'virginica' TO TRAIN xgboost.gbtree\n"
        "WITH learning_rate = 0.2, n_estimators = 3, reg_lambda = 2.0, reg_alpha = 0.5,\n"
        "  scale_pos_weight = 4, max_delta_step = 1, random_state = 7, train.disk_cache = FALSE\n"
        f"COLUMN {MEASURES} LABEL class INTO x;"
    )
    status, _, err = run(iris_duckdb_url, program, capsys)
    assert status == 0, err
    model = stored(iris_duckdb_url, "x")
    params = model.metadata["params"]
    assert params["eta"] == 0.2 and params["lambda"] == 2.0 and params["alpha"] == 0.5
    assert params["scale_pos_weight"] == 4.0 and params["max_delta_step"] == 1.0
    assert params["seed"] == 7
    assert model.metadata["attributes"]["train.num_boost_round"] == 3
    assert not {"learning_rate", "n_estimators", "reg_lambda"} & set(params)


def test_old_and_other_names_are_taken_under_sqlmls():
    statement = check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH objective = 'reg:linear', "
        "num_boost_round = 4, train.num_workers = 3, n_jobs = 2, nthread = 2 LABEL y INTO m;"
    )
    assert statement.attributes["objective"] == "reg:squarederror"
    assert statement.attributes["train.num_boost_round"] == 4
    assert statement.attributes["train.workers"] == 3
    assert statement.attributes["nthread"] == 2
    keras = check(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.optimizer = AdagradOptimizer, "
        "train.num_ps = 1 LABEL y INTO m;"
    )
    assert keras.attributes["model.optimizer"] == "Adagrad"
    assert "train.ps" not in keras.attributes  # Keras trains in one process: not applied
    regressor = check(
        "SELECT * FROM t TO TRAIN DNNRegressor WITH model.label_dimension = 1 LABEL y INTO m;"
    )
    assert regressor.attributes["model.label_dimension"] == 1


def test_warnings_at_check_name_the_attribute_and_its_line(capsys):
    check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree\n"
        "WITH objective = 'reg:squarederror',\n"
        "     train.batch_size = 64, verbosity = 1\n"
        "LABEL y INTO m;"
    )
    assert capsys.readouterr().err.splitlines() == [
        "<input>:3:6: warning: xgboost.gbtree takes train.batch_size but does not "
        "apply it: sqlml reads every row at once, or 262,144 at a time with "
        "train.external_memory",
        "<input>:3:29: warning: xgboost.gbtree takes verbosity but does not apply "
        "it: sqlml runs XGBoost quietly and reports each round to its progress display",
    ]


@pytest.mark.parametrize(
    ("attributes", "message", "hint"),
    [
        (
            "optimizer.momentum = 0.9",
            "attribute optimizer.momentum applies to model.optimizer = SGD or RMSprop, "
            "not model.optimizer = Adam (when omitted)",
            "remove it, or set model.optimizer = SGD",
        ),
        (
            "model.optimizer = Adagrad, optimizer.nesterov = TRUE",
            "attribute optimizer.nesterov applies to model.optimizer = SGD, "
            "not model.optimizer = Adagrad",
            "remove it, or set model.optimizer = SGD",
        ),
        (
            "model.optimizer = Adamm",
            "attribute model.optimizer must be one of 'Adam', 'SGD'",
            "the Keras optimizer",
        ),
        (
            "model.label_dimension = 2",
            "attribute model.label_dimension must be <= 1",
            "sqlml's regressors predict one",
        ),
        (
            "train.num_workers = 2, train.workers = 3",
            "attribute train.workers is given twice, as train.num_workers and as "
            "train.workers, with different values",
            "keep one of train.num_workers and train.workers",
        ),
    ],
)
def test_refused_attributes_say_why_and_where(attributes, message, hint):
    text = f"SELECT * FROM t TO TRAIN DNNRegressor WITH\n  {attributes} LABEL y INTO m;"
    with pytest.raises(CheckError) as caught:
        check(text)
    error = caught.value
    assert error.message.startswith(message), error.message
    assert hint in error.hint
    assert error.line == 2


@pytest.mark.parametrize(
    ("estimator", "attribute", "hint"),
    [
        ("DNNClassifier", "model.optimizr = Adam", "did you mean model.optimizer?"),
        (
            "DNNClassifier",
            "train.num_worker = 2",
            "did you mean train.num_workers? (sqlml's train.workers)",
        ),
        ("DNNClassifier", "model.learning_rate = 0.1", "did you mean optimizer.learning_rate?"),
        ("DNNClassifier", "n_class = 3", "did you mean model.n_classes?"),  # not n_classes
        ("DNNClassifier", "model.dnn_optimizer = SGD", "did you mean model.optimizer?"),
        ("xgboost.gbtree", "learning_rat = 0.1", "did you mean learning_rate? (sqlml's eta)"),
    ],
)
def test_did_you_mean_knows_sqlflows_names(estimator, attribute, hint):
    with pytest.raises(CheckError) as caught:
        check(f"SELECT * FROM t TO TRAIN {estimator} WITH {attribute} LABEL y INTO m;")
    assert caught.value.hint == hint


def test_model_loss_lists_the_model_attributes_only():
    with pytest.raises(CheckError) as caught:
        check("SELECT * FROM t TO TRAIN DNNClassifier WITH model.loss = 'x' LABEL y INTO m;")
    assert caught.value.hint == (
        "it takes model.activation, model.batch_norm, model.dropout, model.hidden_units, "
        "model.n_classes, model.optimizer"
    )


def test_did_you_mean_an_estimator_looks_past_the_task_word():
    assert closest_estimator("DNNClasifier") == "DNNClassifier"
    assert closest_estimator("sqlflow_models.DNNClasifier") in (
        "DNNClassifier",
        "sqlflow_models.DNNClassifier",
    )
    assert closest_estimator("SVMClassifier") is None  # not LinearClassifier
    assert closest_estimator("RandomForestClassifier") != "LinearClassifier"


def test_an_alias_is_searched_under_sqlmls_name():
    statement = check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH learning_rate = CHOICE(0.1, 0.2) "
        "LABEL y INTO m;"
    )
    assert statement.space == {"eta": {"kind": "choice", "type": "float", "values": [0.1, 0.2]}}
    with pytest.raises(CheckError, match="verbosity cannot be searched: sqlml does not apply"):
        check(
            "SELECT * FROM t TO TRAIN xgboost.gbtree WITH verbosity = CHOICE(0, 1) LABEL y INTO m;"
        )


def test_under_using_an_alias_is_its_attributes_kind():
    statement = check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH learning_rate = 0.1, n_estimators = 2 "
        "LABEL y USING b INTO m;"
    )
    assert statement.attributes["eta"] == 0.1
    assert statement.attributes["train.num_boost_round"] == 2
    # Issue 15: an architecture alias repeated with USING is kept under its stored name, to
    # compare with the base's when it is loaded (it was refused before).
    continued = check(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.activation_fn = 'relu' "
        "LABEL y USING b INTO m;"
    )
    assert "model.activation_fn" not in continued.attributes
    assert [(name, given["written"]) for name, given in continued.repeated.items()] == [
        ("model.activation", "model.activation_fn")
    ]


def test_every_xgboost_estimator_takes_the_scikit_learn_names_of_gbtree():
    """The same names, for the same attributes, on every XGBoost estimator SQLFlow names
    (BoostedTrees* take TensorFlow's model.* names); XGBoost's random forests count their
    trees, not their rounds, in n_estimators."""
    gbtree = ESTIMATORS["xgboost.gbtree"].attributes
    forests = {"XGBRFClassifier", "XGBRFRegressor"}
    for name, estimator in ESTIMATORS.items():
        if estimator.family != "xgboost" or name.startswith("BoostedTrees"):
            continue
        forest = name.removeprefix("xgboost.") in forests
        for own, attr in gbtree.items():
            if own in estimator.attributes:
                expected = set(attr.aliases)
                if forest and own in ("train.num_boost_round", "num_parallel_tree"):
                    expected ^= {"n_estimators"}  # from the rounds to the trees
                assert set(estimator.attributes[own].aliases) == expected, (name, own)
        statement = check(
            f"SELECT * FROM t TO TRAIN {name} WITH learning_rate = 0.1, n_estimators = 4, "
            "reg_lambda = 2, reg_alpha = 1, random_state = 3, n_jobs = 2"
            f"{', train.group_column = q' if name.endswith('Ranker') else ''} LABEL y INTO m;"
        )
        attributes = statement.attributes
        assert attributes["num_parallel_tree" if forest else "train.num_boost_round"] == 4, name
        assert (attributes["eta"], attributes["lambda"], attributes["alpha"]) == (0.1, 2.0, 1.0)
        assert (attributes["seed"], attributes["nthread"]) == (3, 2)


def test_train_max_steps_stops_within_an_epoch(iris_duckdb_url, capsys):
    program = (
        "SELECT * FROM iris_train TO TRAIN DNNClassifier\n"
        "WITH train.epoch = 5, train.batch_size = 10, train.max_steps = 3\n"
        f"COLUMN {MEASURES} LABEL class INTO m;"
    )
    status, _, err = run(iris_duckdb_url, program, capsys)
    assert status == 0, err
    with zipfile.ZipFile(io.BytesIO(stored(iris_duckdb_url, "m").data)) as archive:
        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")))
        assert int(weights["optimizer/vars/0"][()]) == 3  # the optimizer's iterations


def test_a_searched_optimizer_argument_is_checked_against_the_optimizer():
    statement = check(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.optimizer = SGD, "
        "optimizer.momentum = CHOICE(0.1, 0.9) LABEL y INTO m;"
    )
    assert statement.space["optimizer.momentum"]["values"] == [0.1, 0.9]
    with pytest.raises(CheckError) as caught:
        check(
            "SELECT * FROM t TO TRAIN DNNClassifier WITH model.optimizer = Adagrad, "
            "optimizer.momentum = CHOICE(0.1, 0.9) LABEL y INTO m;"
        )
    assert caught.value.message == (
        "attribute optimizer.momentum applies to model.optimizer = SGD or RMSprop, "
        "not model.optimizer = Adagrad"
    )


# eval_metric without an objective ----------------------------------------------------------

# Labels of each kind: the objective sqlml uses when none is given follows them.
_LABELS = {
    "two words": np.array(["no", "yes"] * 15, dtype=object),
    "three words": np.array(["a", "b", "c"] * 10, dtype=object),
    "two numbers": np.array([0, 1] * 15),
    "numbers": np.linspace(1.0, 10.0, 30),
}
_EVAL_METRICS = (
    "mlogloss", "merror", "logloss", "error", "auc", "aucpr", "rmse", "mae", "rmsle", "mape",
    "mphe", "poisson-nloglik", "gamma-nloglik",
)  # fmt: skip


@pytest.mark.parametrize("task", ["auto", "classifier", "regressor"])
def test_an_omitted_objective_refuses_the_eval_metrics_xgboost_fails_on(task):
    """The objectives sqlml uses without one given (trained here on labels of each kind), and
    the metrics its single-score ones (binary:logistic, reg:squarederror) make XGBoost fail
    on: exactly those sqlml check refuses. A multi:* objective's own misfits (logloss on
    three classes) are left to the label: a two-class one reports them."""
    xgb = pytest.importorskip("xgboost")
    from sqlml.models.xgboost.model import booster_params
    from sqlml.models.xgboost.objectives import OMITTED_OBJECTIVES, omitted_objective_problem
    from sqlml.runtime.labels import fit_labels

    x = np.random.default_rng(0).normal(size=(30, 2))
    used, failing = set(), set()
    for values in _LABELS.values():
        try:
            labels = fit_labels("y", values, task, None)
        except ModelError:  # text for a regressor
            continue
        params = booster_params(labels, {})
        used.add(params["objective"])
        if params["objective"].startswith("multi:"):
            continue
        matrix = xgb.DMatrix(x, label=labels.encode(values))
        for metric in _EVAL_METRICS:
            try:
                xgb.train({**params, "eval_metric": metric}, matrix, 1).eval(matrix)
            except xgb.core.XGBoostError:
                failing.add(metric)
    assert used == set(OMITTED_OBJECTIVES[task])
    assert failing == {"mlogloss", "merror"}
    refused = {m for m in _EVAL_METRICS if omitted_objective_problem(m, task) is not None}
    assert refused == failing


@pytest.mark.parametrize(
    ("estimator", "hint"),
    [
        ("xgboost.gbtree", "set objective = 'multi:softprob' (or 'multi:softmax')"),
        ("xgboost.dart", "set objective = 'multi:softprob' (or 'multi:softmax')"),
        ("XGBClassifier", "set objective = 'multi:softprob' (or 'multi:softmax')"),
        ("xgboost.XGBRFClassifier", "set objective = 'multi:softprob' (or 'multi:softmax')"),
        ("XGBRegressor", "use rmse or mae"),
    ],
)
def test_check_refuses_an_eval_metric_the_omitted_objective_cannot_report(estimator, hint):
    attributes = "  max_depth = 2, eval_metric = 'mlogloss'"
    with pytest.raises(CheckError) as caught:
        check(f"SELECT * FROM t TO TRAIN {estimator} WITH\n{attributes}\nLABEL y INTO m;")
    error = caught.value
    # At the value, as eval_metric's other errors.
    assert (error.line, error.column) == (2, attributes.index("'mlogloss'") + 1)
    assert error.message.startswith(
        "eval_metric mlogloss measures a multi:* objective, but no objective is given: sqlml's "
    ), error.message
    assert error.hint == hint


@pytest.mark.parametrize(
    "attributes",
    [
        "objective = 'multi:softprob', num_class = 3, eval_metric = 'mlogloss'",
        "objective = 'multi:softmax', eval_metric = merror",
        "eval_metric = 'logloss'",  # two classes: binary:logistic reports it
        "eval_metric = 'auc'",
    ],
)
def test_check_takes_an_eval_metric_the_objective_reports(attributes):
    statement = check(f"SELECT * FROM t TO TRAIN xgboost.gbtree WITH {attributes} LABEL y INTO m;")
    assert statement.attributes["eval_metric"] in ("mlogloss", "merror", "logloss", "auc")


def test_check_leaves_a_continued_models_objective_to_the_base():
    """Under USING, an omitted objective is the base model's, known when it is loaded."""
    statement = check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH eval_metric = 'mlogloss' "
        "LABEL y USING base INTO m;"
    )
    assert statement.attributes["eval_metric"] == "mlogloss"


def test_sqlflows_unprefixed_names_train_the_network_with_a_warning_each(iris_duckdb_url, capsys):
    """SQLFlow's first releases passed unprefixed attributes to TensorFlow's constructor."""
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier\n"
        "WITH n_classes = 3, hidden_units = [12, 6], learning_rate = 0.05, train.epoch = 1\n"
        "LABEL class INTO m;"
    )
    status, _, err = run(iris_duckdb_url, program, capsys)
    assert status == 0, err
    attributes = stored(iris_duckdb_url, "m").metadata["attributes"]
    assert attributes["model.n_classes"] == 3
    assert attributes["model.hidden_units"] == [12, 6]
    assert attributes["optimizer.learning_rate"] == 0.05
    assert not {"n_classes", "hidden_units", "learning_rate"} & set(attributes)
    warned = [line for line in err.splitlines() if "old SQLFlow spelling" in line]
    assert warned == [
        "<-e>:2:6: warning: n_classes: an old SQLFlow spelling, taken as "
        "model.n_classes (write model.n_classes)",
        "<-e>:2:21: warning: hidden_units: an old SQLFlow spelling, taken as "
        "model.hidden_units (write model.hidden_units)",
        "<-e>:2:45: warning: learning_rate: an old SQLFlow spelling, taken as "
        "optimizer.learning_rate (write optimizer.learning_rate)",
    ]
    units = [layer["config"]["units"] for layer in _dense_layers(stored(iris_duckdb_url, "m"))]
    assert units == [12, 6, 3]


def _dense_layers(model) -> list[dict]:
    config = keras_config(model.data)["config"]
    return [layer for layer in config["layers"] if layer["class_name"] == "Dense"]


def test_layers_and_the_wide_and_deep_names_are_taken_unprefixed_too(capsys):
    dnn = check("SELECT * FROM t TO TRAIN DNNRegressor WITH layers = [100, 200] LABEL y INTO m;")
    assert dnn.attributes["model.hidden_units"] == [100, 200]
    wide = check(
        "SELECT * FROM t TO TRAIN DNNLinearCombinedClassifier WITH dnn_hidden_units = [8], "
        "dnn_activation_fn = 'tf.nn.tanh' LABEL y INTO m;"
    )
    assert wide.attributes["model.dnn_hidden_units"] == [8]
    assert wide.attributes["model.dnn_activation"] == "tanh"
    assert "write model.hidden_units" in capsys.readouterr().err


def test_an_old_name_given_with_the_current_one_must_agree():
    same = check(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH n_classes = 3, model.n_classes = 3 "
        "LABEL y INTO m;"
    )
    assert same.attributes["model.n_classes"] == 3
    with pytest.raises(CheckError, match=r"given twice, as n_classes and as model\.n_classes"):
        check(
            "SELECT * FROM t TO TRAIN DNNClassifier WITH n_classes = 3, model.n_classes = 4 "
            "LABEL y INTO m;"
        )


def test_the_attributes_of_sqlflows_kmeans_on_pai(capsys):
    statement = check(
        "SELECT * FROM t TO TRAIN kmeans\n"
        "WITH center_count = 4, idx_table_name = out.idx, excluded_columns = class INTO m;"
    )
    assert statement.estimator == "KMeans"
    assert statement.attributes["model.n_clusters"] == 4
    assert statement.attributes["model.excluded_columns"] == "class"
    assert "model.idx_table_name" not in statement.attributes
    assert capsys.readouterr().err.splitlines() == [
        "<input>:2:24: warning: KMeans takes idx_table_name but does not apply it: "
        "TO PREDICT writes each row's cluster into the table it names",
    ]
    prefixed = check(
        "SELECT * FROM t TO TRAIN KMeans WITH model.center_count = 2, "
        "model.excluded_columns = 'class, id' INTO m;"
    )
    assert prefixed.attributes["model.n_clusters"] == 2
    assert prefixed.attributes["model.excluded_columns"] == "class, id"


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        (
            "SELECT * FROM t TO TRAIN BoostedTreesClassifier WITH model.n_batches_per_layer = 70, "
            "train.num_workers = 2, train.num_ps = 1 LABEL y INTO m;",
            "BoostedTreesClassifier ignores model.n_batches_per_layer, train.num_ps",
        ),
        (
            "SELECT * FROM t TO TRAIN sqlflow_models.DeepEmbeddingClusterModel WITH "
            "model.n_clusters = 3, train.verbose = 1 INTO m;",
            "sqlflow_models.DeepEmbeddingClusterModel ignores train.verbose",
        ),
    ],
)
def test_sqlflows_training_settings_sqlml_has_no_use_for_are_warned_of(text, warning, capsys):
    statement = check(text)
    assert not {"train.num_ps", "train.ps", "train.verbose"} & set(statement.attributes)
    assert f"<input>:1:26: warning: {warning}" in capsys.readouterr().err


def test_to_explain_takes_label_column_as_label_col(capsys):
    statement = check(
        "SELECT * FROM t TO EXPLAIN m WITH label_column = class USING PermutationExplainer;"
    )
    assert statement.attributes["label_col"] == "class"
    assert capsys.readouterr().err == (
        "<input>:1:35: warning: label_column: an old SQLFlow spelling, taken as "
        "label_col (write label_col)\n"
    )


def test_to_minimize_takes_sqlflows_solving_service_settings_with_warnings(capsys):
    statement = check(
        "SELECT * FROM p TO MINIMIZE SUM(cost * amount) CONSTRAINT SUM(amount) >= 10\n"
        "WITH variables = 'amount(product)', var_type = 'NonNegativeReals',\n"
        "     data.enable_slice = True, data.batch_size = 1, worker.core = 16, worker.num = 4,\n"
        "     worker.memory = 8192, solver.max_iter = 10\n"
        "USING glpk INTO result;"
    )
    assert not any(name.startswith(("data.", "worker.")) for name in statement.attributes)
    assert "solver.max_iter" not in statement.attributes
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 6
    assert err[0] == (
        "<input>:3:6: warning: TO MINIMIZE takes data.enable_slice but does not "
        "apply it: sqlml solves the whole problem at once, in one process"
    )
    assert err[5] == (
        "<input>:4:28: warning: TO MINIMIZE takes solver.max_iter but does not "
        "apply it: HiGHS stops at the optimum, or at solver.time_limit"
    )


def test_train_optimizer_is_refused_as_sqlflow_refuses_it():
    """SQLFlow's IR test writes it; its TensorFlow code generator refuses it."""
    with pytest.raises(CheckError) as caught:
        check(
            "SELECT * FROM t TO TRAIN DNNClassifier WITH train.optimizer = 'adam' LABEL y INTO m;"
        )
    assert caught.value.message == "DNNClassifier has no attribute train.optimizer"
    assert caught.value.hint == "did you mean model.optimizer?"


def test_katib_ranges_are_searched_as_their_candidates(capsys):
    statement = check(
        "SELECT * FROM t TO TRAIN xgboost.gbtree\n"
        "WITH objective = 'multi:softmax', eta = 0.1, range.num_round = [50, 100],\n"
        "     range.max_depth = [2, 8], range.subsample = [0.5, 1]\n"
        "LABEL y INTO m;"
    )
    assert statement.kind == "search"
    assert statement.space == {
        "train.num_boost_round": {"kind": "int_range", "type": "int", "low": 50, "high": 100},
        "max_depth": {"kind": "int_range", "type": "int", "low": 2, "high": 8},
        "subsample": {"kind": "uniform", "type": "float", "low": 0.5, "high": 1},
    }
    assert capsys.readouterr().err.splitlines() == [
        "<input>:2:46: warning: range.num_round: SQLFlow's Katib range, taken as "
        "train.num_boost_round = INT_RANGE(50, 100) (write that)",
        "<input>:3:6: warning: range.max_depth: SQLFlow's Katib range, taken as "
        "max_depth = INT_RANGE(2, 8) (write that)",
        "<input>:3:32: warning: range.subsample: SQLFlow's Katib range, taken as "
        "subsample = UNIFORM(0.5, 1) (write that)",
    ]


def test_a_katib_range_is_two_numbers():
    with pytest.raises(CheckError) as caught:
        check("SELECT * FROM t TO TRAIN xgboost.gbtree WITH range.max_depth = 3 LABEL y INTO m;")
    assert caught.value.message == (
        "attribute range.max_depth must be a list of two numbers, [low, high] (got 3)"
    )
    assert (caught.value.line, caught.value.column) == (1, 46)
