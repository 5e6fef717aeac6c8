"""EVALUATE, EXPLAIN and the model store statements, on DuckDB and MySQL."""

from __future__ import annotations

import pytest

from sqlml.cli import main
from sqlml.datasources import connect


@pytest.fixture
def trained(iris_url, unique_name, capsys):
    """An XGBoost iris model trained on iris_train; dropped afterwards."""
    model = f"{unique_name}_m"
    program = (
        "SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train "
        f"TO TRAIN xgboost.gbtree WITH train.num_boost_round = 20 LABEL class INTO {model};"
    )
    assert main(["-e", program, "--datasource", iris_url]) == 0, capsys.readouterr().err
    capsys.readouterr()
    yield iris_url, model
    main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", iris_url])


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def test_evaluate_writes_a_metrics_table(trained, unique_name, capsys):
    url, model = trained
    table = f"{unique_name}_eval"
    status, _, err = run(
        url, f"SELECT * FROM iris_test TO EVALUATE {model} LABEL class INTO {table};", capsys
    )
    assert status == 0, err
    ds = connect(url)
    result = ds.execute(f"SELECT * FROM {table}")
    ds.execute(f"DROP TABLE {table}")
    ds.close()
    assert result.columns == ["accuracy", "precision", "recall", "f1", "auc", "log_loss"]
    (row,) = result.rows
    metrics = dict(zip(result.columns, row, strict=True))
    assert metrics["accuracy"] >= 0.9
    assert 0.9 <= metrics["auc"] <= 1.0
    assert 0 < metrics["log_loss"] < 0.5


def test_evaluate_chosen_metrics_and_unknown_metric(trained, unique_name, capsys):
    url, model = trained
    table = f"{unique_name}_eval"
    program = (
        f"SELECT * FROM iris_test TO EVALUATE {model} "
        f"WITH validation.metrics = 'Accuracy,F1Score' LABEL class INTO {table};"
        f"SELECT * FROM {table}; DROP TABLE {table};"
    )
    status, out, err = run(url, program, capsys)
    assert status == 0, err
    assert out.splitlines()[0] == "accuracy,f1"
    status, _, err = run(
        url,
        f"SELECT * FROM iris_test TO EVALUATE {model} WITH validation.metrics = 'acc' "
        f"LABEL class INTO {table};",
        capsys,
    )
    assert status == 1
    assert "unknown metric acc" in err


@pytest.mark.parametrize("explainer", ["TreeExplainer", "PermutationExplainer"])
def test_explain_ranks_the_petal_measures_first(trained, explainer, capsys):
    url, model = trained
    status, out, err = run(
        url, f"SELECT * FROM iris_test TO EXPLAIN {model} USING {explainer};", capsys
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "feature,importance"
    ranked = [line.split(",")[0] for line in lines[1:]]
    assert sorted(ranked) == ["petal_length", "petal_width", "sepal_length", "sepal_width"]
    assert set(ranked[:2]) <= {"petal_length", "petal_width", "sepal_width"}
    assert ranked[0].startswith("petal")


def test_show_describe_and_drop(trained, capsys):
    url, model = trained
    status, out, err = run(url, f"SHOW TRAIN {model}; DESCRIBE MODEL {model};", capsys)
    assert status == 0, err
    assert "TO TRAIN xgboost.gbtree" in out
    assert "classes," in out and "setosa" in out
    status, out, _ = run(url, "SHOW MODELS;", capsys)
    assert model in out
    status, _, err = run(url, f"DROP MODEL {model}; DROP MODEL IF EXISTS {model};", capsys)
    assert status == 0, err
    status, _, err = run(url, f"DROP MODEL {model};", capsys)
    assert status == 1
    assert f"<-e>:1:12: error: model {model} does not exist" in err  # at its name


def test_predict_with_a_dropped_model_fails_cleanly(trained, unique_name, capsys):
    url, model = trained
    run(url, f"DROP MODEL {model};", capsys)
    status, _, err = run(
        url, f"SELECT * FROM iris_test TO PREDICT {unique_name}.class USING {model};", capsys
    )
    assert status == 1
    assert f"model {model} does not exist" in err and "Traceback" not in err


def test_a_model_continued_twice_keeps_its_base_architecture(iris_url, unique_name, capsys):
    """USING keeps the base's architecture attributes in the new model's metadata, so that
    DESCRIBE MODEL shows them and a continuation of the continued model checks them."""
    base, second, third = (f"{unique_name}_{n}" for n in ("base", "second", "third"))
    select = "SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train"
    rounds = "train.num_boost_round = 5"
    program = (
        f"{select} TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', num_class = 3, "
        f"{rounds} LABEL class INTO {base};\n"
        f"{select} TO TRAIN xgboost.gbtree WITH {rounds} LABEL class USING {base} INTO {second};\n"
        f"{select} TO TRAIN xgboost.gbtree WITH {rounds} LABEL class USING {second} INTO {third};"
    )
    try:
        status, _, err = run(iris_url, program, capsys)
        assert status == 0, err
        status, out, err = run(iris_url, f"SHOW TRAIN {third}; DESCRIBE MODEL {third};", capsys)
        assert status == 0, err
        assert f"USING {second} INTO {third}" in out
        attributes = next(line for line in out.splitlines() if line.startswith("attributes,"))
        assert '""objective"": ""multi:softprob""' in attributes
        assert '""num_class"": 3' in attributes
        assert '""train.num_boost_round"": 5' in attributes

        wrong = (
            f"{select} TO TRAIN xgboost.gbtree WITH objective = 'multi:softmax', {rounds} "
            f"LABEL class USING {third} INTO {unique_name}_fourth;"
        )
        status, _, err = run(iris_url, wrong, capsys)
        assert status == 1
        assert (
            f'<-e>:1:{len(select) + 31}: error: attribute objective = "multi:softmax" differs '
            f'from the base model {third}\'s "multi:softprob"'
        ) in err
    finally:
        drops = "".join(f"DROP MODEL IF EXISTS {m};" for m in (base, second, third))
        run(iris_url, drops, capsys)
