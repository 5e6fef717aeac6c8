"""TO EVALUATE without LABEL for models that learned without one: a clustering's silhouette
(against scikit-learn's own, in the space the model clusters in), an outlier detector's share
of flagged rows; with LABEL, a clustering's adjusted Rand index; a supervised model without
LABEL refused at ``sqlml check`` where LABEL is missing, and at run time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import datasource_url, import_or_skip, load_iris

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.metric_values import adjusted_rand, calinski_harabasz, davies_bouldin, silhouette

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
FLOWERS = "(SELECT * FROM iris_train UNION ALL SELECT * FROM iris_test) AS t"
FLAG = "CASE WHEN class = 'setosa' THEN 1 ELSE -1 END AS flag"


@pytest.fixture(params=["duckdb", "mysql"])
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A database holding iris_train and iris_test (MySQL with CI=true)."""
    found = datasource_url(request.param, tmp_path)
    ds = connect(found)
    load_iris(ds)
    ds.close()
    return found


def run(url: str, program: str, capsys) -> str:
    status = main(["-e", program, "--datasource", url])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    return out + err


def query(url: str, sql: str) -> tuple[list[str], list[tuple]]:
    ds = connect(url)
    try:
        result = ds.execute(sql)
        return list(result.columns), result.rows
    finally:
        ds.close()


def metrics(url: str, table: str) -> dict[str, float]:
    columns, rows = query(url, f"SELECT * FROM {table}")
    return {name.lower(): float(value) for name, value in zip(columns, rows[0], strict=True)}


def test_kmeans_of_both_families_measured_without_and_with_label(url, unique_name, capsys):
    sk = import_or_skip("sklearn.metrics")
    import_or_skip("skops")
    p = unique_name
    run(
        url,
        f"SELECT {MEASURES} FROM {FLOWERS} TO TRAIN sklearn.cluster.KMeans "
        f"WITH model.n_clusters = 3, model.n_init = 10 INTO {p}_sk;\n"
        f"SELECT {MEASURES} FROM {FLOWERS} TO TRAIN KMeans WITH model.n_clusters = 3 "
        f"INTO {p}_own;\n"
        f"SELECT id, {MEASURES}, class FROM {FLOWERS} "
        f"TO PREDICT {p}_sk_out.cluster USING {p}_sk;\n"
        f"SELECT id, {MEASURES}, class FROM {FLOWERS} "
        f"TO PREDICT {p}_own_out.cluster USING {p}_own;\n"
        f"SELECT {MEASURES} FROM {FLOWERS} TO EVALUATE {p}_sk INTO {p}_sk_eval;\n"
        f"SELECT {MEASURES} FROM {FLOWERS} TO EVALUATE {p}_own "
        f"WITH validation.metrics = 'silhouette_score' INTO {p}_own_eval;\n"
        f"SELECT {MEASURES}, class FROM {FLOWERS} TO EVALUATE {p}_sk LABEL class "
        f"INTO {p}_sk_ari;\n"
        f"SELECT {MEASURES}, class FROM {FLOWERS} TO EVALUATE {p}_own "
        f"WITH validation.metrics = 'adjusted_rand_score' LABEL class INTO {p}_own_ari;",
        capsys,
    )
    found = {}
    for family in ("sk", "own"):
        _, rows = query(url, f"SELECT {MEASURES}, cluster, class FROM {p}_{family}_out ORDER BY id")
        x = np.array([r[:4] for r in rows], dtype=np.float64)
        found[family] = np.array([int(r[4]) for r in rows])
        species = np.array([r[5] for r in rows])
    # scikit-learn's KMeans clusters the features as selected; sqlml's, standardised ones
    sk_x, own_x = x, (x - x.mean(axis=0)) / x.std(axis=0)
    unlabelled = metrics(url, f"{p}_sk_eval")
    assert set(unlabelled) == {"silhouette", "calinski_harabasz", "davies_bouldin"}
    assert unlabelled["silhouette"] == pytest.approx(sk.silhouette_score(sk_x, found["sk"]))
    assert unlabelled["silhouette"] > 0.5  # iris's three clusters are well apart
    assert unlabelled["calinski_harabasz"] == pytest.approx(
        sk.calinski_harabasz_score(sk_x, found["sk"])
    )
    assert unlabelled["davies_bouldin"] == pytest.approx(sk.davies_bouldin_score(sk_x, found["sk"]))
    own = metrics(url, f"{p}_own_eval")
    assert own == {"silhouette_score": pytest.approx(sk.silhouette_score(own_x, found["own"]))}
    labelled = metrics(url, f"{p}_sk_ari")
    assert labelled["adjusted_rand"] == pytest.approx(sk.adjusted_rand_score(species, found["sk"]))
    assert labelled["adjusted_rand"] >= 0.7  # KMeans recovers the species
    assert labelled["silhouette"] == pytest.approx(unlabelled["silhouette"])
    own_ari = metrics(url, f"{p}_own_ari")["adjusted_rand_score"]
    assert own_ari == pytest.approx(sk.adjusted_rand_score(species, found["own"]))
    assert own_ari >= 0.5


def test_outlier_share_without_label_and_classifier_metrics_with_one(url, unique_name, capsys):
    import_or_skip("sklearn")
    import_or_skip("skops")
    p = unique_name
    out = run(
        url,
        f"SELECT {MEASURES} FROM iris_train WHERE class = 'setosa' "
        f"TO TRAIN sklearn.ensemble.IsolationForest "
        f"WITH model.n_estimators = 50, model.contamination = 0.05 INTO {p}_iso;\n"
        f"SELECT {MEASURES} FROM iris_train WHERE class = 'setosa' "
        f"TO TRAIN sqlflow_models.OneClassSVM WITH model.nu = 0.05 INTO {p}_svm;\n"
        + "".join(
            f"SELECT id, {MEASURES} FROM iris_test TO PREDICT {p}_{m}_out.flag USING {p}_{m};\n"
            f"SELECT {MEASURES} FROM iris_test TO EVALUATE {p}_{m} INTO {p}_{m}_share;\n"
            f"SELECT {MEASURES}, {FLAG} FROM iris_test TO EVALUATE {p}_{m} LABEL flag "
            f"INTO {p}_{m}_acc;\n"
            for m in ("iso", "svm")
        ),
        capsys,
    )
    assert f"evaluated {p}_iso on 30 rows: outlier_share" in out
    for model in ("iso", "svm"):
        _, rows = query(url, f"SELECT flag FROM {p}_{model}_out")
        flagged = np.mean([int(r[0]) == -1 for r in rows])
        assert metrics(url, f"{p}_{model}_share") == {"outlier_share": pytest.approx(flagged)}
        assert flagged >= 20 / 30  # the 20 flowers that are not setosas, at least
        assert metrics(url, f"{p}_{model}_acc")["accuracy"] >= 0.9


@pytest.fixture
def stored(duckdb_url: str, unique_name: str, capsys) -> str:
    """A DuckDB database holding iris and a classifier ``<unique_name>_lr`` learnt on it."""
    import_or_skip("sklearn")
    import_or_skip("skops")
    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    run(
        duckdb_url,
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN "
        f"sklearn.linear_model.LogisticRegression LABEL class INTO {unique_name}_lr;",
        capsys,
    )
    return duckdb_url


def test_a_supervised_model_without_label_is_refused_where_label_is_missing(stored, unique_name):
    p = unique_name
    unlabelled = f"SELECT {MEASURES} FROM iris_test TO EVALUATE {p}_xgb "
    program = (
        f"SELECT {MEASURES} FROM iris_test TO EVALUATE {p}_lr\n"
        f"  INTO {p}_e;\n"
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH objective = 'multi:softprob' LABEL class INTO {p}_xgb;\n"
        f"{unlabelled}INTO {p}_e2;\n"
        f"SELECT {MEASURES} FROM iris_test TO TRAIN KMeans INTO {p}_km;\n"
        f"SELECT {MEASURES} FROM iris_test TO EVALUATE {p}_km INTO {p}_e3;\n"
    )
    ds = connect(stored)
    try:
        errors = check_program(program, "duckdb", ds)
    finally:
        ds.close()
    found = [(e.line, e.column, e.message, e.hint) for e in errors]
    # at INTO, where LABEL is missing: a stored model, one trained earlier; KMeans needs none
    assert [(line, column) for line, column, *_ in found] == [(2, 3), (4, len(unlabelled) + 1)]
    *_, message, hint = found[0]
    assert message == (
        f"TO EVALUATE {p}_lr needs a LABEL: {p}_lr is a classifier that learned to predict "
        "class, and its metrics compare its predictions with that column"
    )
    assert hint.startswith("add LABEL class before INTO")
    assert found[1][2].startswith(f"TO EVALUATE {p}_xgb needs a LABEL: {p}_xgb is a classifier")


def test_a_supervised_model_without_label_is_refused_at_run_time(stored, unique_name, capsys):
    status = main(
        [
            "-e",
            f"SELECT {MEASURES} FROM iris_test TO EVALUATE {unique_name}_lr INTO {unique_name}_e;",
            "--datasource",
            stored,
        ]
    )
    out, err = capsys.readouterr()
    assert status == 1
    assert f"<-e>:1:1: error: TO EVALUATE {unique_name}_lr needs a LABEL" in out + err
    assert "hint: add LABEL class before INTO" in out + err


@pytest.mark.parametrize(
    ("metrics_value", "column", "message"),
    [
        ("accuracy", 5, "names accuracy, which compares predictions with a LABEL column"),
        ("silhouette,adjusted_rand_score", 1, "names adjusted_rand_score, which compares"),
    ],
)
def test_metrics_that_need_a_label_are_refused_without_one(metrics_value, column, message):
    program = (
        f"SELECT * FROM t TO EVALUATE m WITH validation.metrics = '{metrics_value}'\n"
        + " " * (column - 1)
        + "INTO e;"
    )
    (error,) = check_program(program, "duckdb")
    assert (error.line, error.column) == (2, column)
    assert error.message.startswith("TO EVALUATE m has no LABEL, but validation.metrics names")
    assert message in error.message
    assert error.hint.startswith("add LABEL <column> before INTO")


def test_clustering_metrics_match_scikit_learn_on_random_partitions():
    sk = import_or_skip("sklearn.metrics")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 3))
    for clusters in (rng.integers(0, 4, 400), np.r_[np.zeros(399, int), 1]):
        assert silhouette(x, clusters) == pytest.approx(sk.silhouette_score(x, clusters))
        assert calinski_harabasz(x, clusters) == pytest.approx(
            sk.calinski_harabasz_score(x, clusters)
        )
        assert davies_bouldin(x, clusters) == pytest.approx(sk.davies_bouldin_score(x, clusters))
    truth = rng.choice(np.array(["a", "b", "c"]), 400)
    found = rng.integers(0, 5, 400)
    assert adjusted_rand(truth, found) == pytest.approx(sk.adjusted_rand_score(truth, found))
    assert adjusted_rand(truth, truth) == 1.0
    assert np.isnan(silhouette(x, np.zeros(400)))  # one cluster: undefined


def test_silhouette_of_many_rows_is_measured_on_a_seeded_sample():
    sk = import_or_skip("sklearn.metrics")
    rng = np.random.default_rng(5)
    centres = np.array([[0, 0], [6, 0], [0, 6]])
    clusters = rng.integers(0, 3, 12_000)
    x = centres[clusters] + rng.normal(size=(12_000, 2))
    measured = silhouette(x, clusters)
    assert measured == silhouette(x, clusters)  # the same sample each time
    chosen = np.sort(np.random.default_rng(0).choice(12_000, 5_000, replace=False))
    assert measured == pytest.approx(sk.silhouette_score(x[chosen], clusters[chosen]))


def test_an_outlier_detector_evaluated_with_a_label_is_a_classifier(
    duckdb_url, unique_name, capsys
):
    p = unique_name
    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    run(
        duckdb_url,
        f"SELECT {MEASURES} FROM iris_train TO TRAIN sqlflow_models.OneClassSVM INTO {p}_svm;",
        capsys,
    )
    labelled = (
        f"SELECT {MEASURES}, {FLAG} FROM iris_test TO EVALUATE {p}_svm "
        "WITH validation.metrics = 'outlier_share' LABEL flag INTO e;"
    )
    unlabelled = (
        f"SELECT {MEASURES} FROM iris_test TO EVALUATE {p}_svm "
        "WITH validation.metrics = 'outlier_share' INTO e;"
    )
    ds = connect(duckdb_url)
    try:
        (error,) = check_program(labelled, "duckdb", ds)
        assert check_program(unlabelled, "duckdb", ds) == []
    finally:
        ds.close()
    assert error.column == labelled.index("validation.metrics") + 1
    assert error.message == (
        "validation.metrics: outlier_share measures an outlier detector; "
        f"{p}_svm, evaluated against a LABEL, is a classifier"
    )
