"""SQLFlow's model zoo names: clustering without LABEL (k-means), BoostedTrees through XGBoost,
XGBoost's scikit-learn names, zoo names trained through the model they map to."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.models.cluster.checks import kmeans_document
from sqlml.models.outlier.checks import one_class_document
from sqlml.models.store import ModelStore
from sqlml.semantics import analyze

CENTRES = np.array([[0.0, 0.0], [10.0, 10.0], [0.0, 10.0]])


def run(url: str, program: str, capsys) -> tuple[list[dict[str, str]], str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return list(csv.DictReader(io.StringIO(out))), err


def rows(url: str, sql: str) -> list[tuple]:
    ds = connect(url)
    try:
        return ds.execute(sql).rows
    finally:
        ds.close()


@pytest.fixture
def blobs(duckdb_url):
    rng = np.random.default_rng(7)
    truth = np.repeat(np.arange(3), 20)
    points = CENTRES[truth] + rng.normal(0, 0.5, (60, 2))
    ds = connect(duckdb_url)
    ds.write_table(["blobs"], {"x": points[:, 0], "y": points[:, 1], "k": truth}, replace=True)
    ds.close()
    return truth


def agree_up_to_relabelling(found: list[int], truth: np.ndarray) -> bool:
    return any(
        all(mapping[t] == f for t, f in zip(truth, found, strict=True))
        for mapping in itertools.permutations(range(3))
    )


def test_kmeans_without_label_finds_the_blobs(blobs, duckdb_url, capsys, tmp_path):
    run(
        duckdb_url,
        "SELECT x, y FROM blobs TO TRAIN KMeans WITH model.n_clusters = 3 INTO clusters;",
        capsys,
    )
    run(duckdb_url, "SELECT k, x, y FROM blobs TO PREDICT found.cluster USING clusters;", capsys)
    found = [row[0] for row in rows(duckdb_url, "SELECT cluster FROM found ORDER BY rowid")]
    assert agree_up_to_relabelling(found, blobs)

    run(duckdb_url, "SELECT x, y FROM blobs TO TRAIN KMeans USING clusters INTO again;", capsys)
    run(duckdb_url, "SELECT x, y FROM blobs TO PREDICT refound.cluster USING again;", capsys)
    assert [r[0] for r in rows(duckdb_url, "SELECT cluster FROM refound ORDER BY rowid")] == found

    file = tmp_path / "clusters.json"
    assert main(["export", "clusters", str(file), "--datasource", duckdb_url]) == 0
    assert len(json.loads(file.read_text())["centers"]) == 3
    assert json.loads(Path(f"{file}.sqlml.json").read_text())["family"] == "cluster"


def test_deep_embedding_cluster_model_trains_kmeans_with_a_warning(blobs, duckdb_url, capsys):
    _, err = run(
        duckdb_url,
        "SELECT x, y FROM blobs TO TRAIN sqlflow_models.DeepEmbeddingClusterModel "
        "WITH model.n_clusters = 3, model.pretrain_epochs = 10, model.kmeans_init = 5 "
        "INTO dec;",
        capsys,
    )
    assert "sqlml trains KMeans instead" in err
    assert "ignores model.pretrain_epochs" in err
    run(duckdb_url, "SELECT x, y FROM blobs TO PREDICT found.class USING dec;", capsys)
    found = [row[0] for row in rows(duckdb_url, "SELECT class FROM found ORDER BY rowid")]
    assert agree_up_to_relabelling(found, blobs)


def test_label_is_required_by_supervised_and_refused_by_unsupervised_estimators():
    with pytest.raises(CheckError, match="needs a LABEL"):
        analyze(parse("SELECT * FROM t TO TRAIN DNNClassifier INTO m;"))
    with pytest.raises(CheckError, match="learns without a LABEL") as raised:
        analyze(parse("SELECT * FROM t TO TRAIN KMeans LABEL y INTO m;"))
    assert (raised.value.line, raised.value.column) == (1, 39)


def test_one_class_svm_writes_1_for_inliers_and_minus_1_for_outliers(duckdb_url, capsys, tmp_path):
    rng = np.random.default_rng(3)
    inliers = rng.normal(0, 1, (200, 2))
    ds = connect(duckdb_url)
    ds.write_table(["normal"], {"a": inliers[:, 0], "b": inliers[:, 1]}, replace=True)
    ds.write_table(
        ["probe"],
        {"a": np.array([0.0, 0.3, 8.0, -9.0]), "b": np.array([0.0, -0.2, 8.0, 7.0])},
        replace=True,
    )
    ds.close()
    _, err = run(
        duckdb_url,
        "SELECT a, b FROM normal TO TRAIN sqlflow_models.OneClassSVM "
        "WITH model.kernel = 'poly', model.nu = 0.05, model.degree = 3 INTO svm;",
        capsys,
    )
    assert "one-class RBF kernel density model" in err and "ignores model.degree" in err
    run(duckdb_url, "SELECT a, b FROM probe TO PREDICT flagged.label USING svm;", capsys)
    assert [r[0] for r in rows(duckdb_url, "SELECT label FROM flagged ORDER BY rowid")] == [
        1,
        1,
        -1,
        -1,
    ]
    file = tmp_path / "svm.json"
    assert main(["export", "svm", str(file), "--datasource", duckdb_url]) == 0
    assert json.loads(file.read_text())["threshold"] > 0


def test_boosted_trees_classifier_trains_xgboost(duckdb_url, capsys):
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (300, 3))
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    ds = connect(duckdb_url)
    ds.write_table(["points"], {"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "y": y}, replace=True)
    ds.close()
    _, err = run(
        duckdb_url,
        "SELECT * FROM points TO TRAIN BoostedTreesClassifier WITH model.n_trees = 30, "
        "model.max_depth = 3, model.learning_rate = 0.3, model.n_batches_per_layer = 1 "
        "LABEL y INTO bt;",
        capsys,
    )
    assert "sqlml trains XGBoost gradient-boosted trees" in err
    assert "ignores model.n_batches_per_layer" in err
    ds = connect(duckdb_url)
    stored = ModelStore(ds).load("bt").metadata
    ds.close()
    assert stored["family"] == "xgboost" and stored["params"]["max_depth"] == 3
    assert stored["params"]["eta"] == 0.3 and "model.n_batches_per_layer" not in stored["params"]
    run(duckdb_url, "SELECT a, b, c FROM points TO PREDICT out.y USING bt;", capsys)
    found = np.array([r[0] for r in rows(duckdb_url, "SELECT y FROM out ORDER BY rowid")])
    assert (found == y).mean() >= 0.9


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("xgboost.XGBClassifier", "xgboost"),
        ("xgboost.xgbregressor", "xgboost"),
        ("XGBRFRegressor", "xgboost"),
        ("xgboost.XGBRFClassifier", "xgboost"),
        ("BoostedTreesRegressor", "xgboost"),
        ("sqlflow_models.DNNClassifier", "keras"),
        ("sqlflow_models.AutoClassifier", "keras"),
        ("sqlflow_models.ScoreCard", "keras"),
    ],
)
def test_sqlflow_names_lower_to_their_family(name, family):
    (statement,) = analyze(parse(f"SELECT * FROM t TO TRAIN {name} LABEL y INTO m;"))
    assert statement.family == family


def test_names_of_a_library_are_not_user_models():
    with pytest.raises(CheckError, match=r"unknown estimator xgboost\.DMatrix"):
        analyze(parse("SELECT * FROM t TO TRAIN xgboost.DMatrix LABEL y INTO m;"))


def test_a_zoo_name_trains_through_its_mapped_model(duckdb_url, capsys):
    rng = np.random.default_rng(9)
    x = rng.normal(0, 1, (200, 2))
    y = np.where(x[:, 0] > 0, "high", "low")
    ds = connect(duckdb_url)
    ds.write_table(["scored"], {"a": x[:, 0], "b": x[:, 1], "y": y}, replace=True)
    ds.close()
    _, err = run(
        duckdb_url,
        "SELECT * FROM scored TO TRAIN sqlflow_models.ScoreCard "
        "WITH train.epoch = 30, optimizer.learning_rate = 0.05 LABEL y INTO card;",
        capsys,
    )
    assert "sqlml trains its LinearClassifier instead" in err
    run(duckdb_url, "SELECT a, b FROM scored TO PREDICT out.y USING card;", capsys)
    found = np.array([r[0] for r in rows(duckdb_url, "SELECT y FROM out ORDER BY rowid")])
    assert (found == y).mean() >= 0.9


def test_stacked_bilstm_classifier_reads_id_sequences(duckdb_url, capsys):
    rng = np.random.default_rng(11)
    sequences = [rng.integers(1, 10, rng.integers(2, 7)) for _ in range(240)]
    texts = np.array([",".join(map(str, s)) for s in sequences], dtype=object)
    y = np.array([int(3 in s) for s in sequences])
    ds = connect(duckdb_url)
    ds.write_table(["texts"], {"content": texts, "class": y}, replace=True)
    ds.close()
    run(
        duckdb_url,
        "SELECT content, class FROM texts TO TRAIN sqlflow_models.StackedBiLSTMClassifier "
        "WITH model.n_classes = 2, model.stack_units = [16, 8], model.hidden_size = 16, "
        "train.epoch = 25, train.batch_size = 16, optimizer.learning_rate = 0.02, "
        "validation.split = 0 "
        "COLUMN EMBEDDING(SEQ_CATEGORY_ID(content, 12, COMMA), 8, sum) LABEL class INTO lstm;",
        capsys,
    )
    run(duckdb_url, "SELECT content FROM texts TO PREDICT out.class USING lstm;", capsys)
    found = np.array([r[0] for r in rows(duckdb_url, "SELECT class FROM out ORDER BY rowid")])
    assert (found == y).mean() >= 0.9


def test_an_unsupervised_estimator_refuses_validation_attributes():
    with pytest.raises(CheckError, match="nothing to validate") as raised:
        analyze(parse("SELECT * FROM t TO TRAIN KMeans WITH validation.split = 0.1 INTO m;"))
    assert (raised.value.line, raised.value.column) == (1, 38)


def test_clustering_trains_in_process_only_and_is_explained_by_its_scores(
    blobs, duckdb_url, capsys
):
    with pytest.raises(CheckError, match=r"KMeans \(cluster models\) trains in one process"):
        analyze(
            parse("SELECT x, y FROM blobs TO TRAIN KMeans WITH train.distributed = true INTO m;")
        )
    statements = analyze(
        parse("SELECT x, y FROM blobs TO TRAIN KMeans WITH train.workers = 2 INTO m;")
    )
    assert "train.workers is not applied" in capsys.readouterr().err
    assert "kubeflow.org" not in to_argo_yaml(statements, "p")
    run(duckdb_url, "SELECT x, y FROM blobs TO TRAIN KMeans INTO clusters;", capsys)
    explained, _ = run(duckdb_url, "SELECT x, y FROM blobs TO EXPLAIN clusters;", capsys)
    assert {row["feature"] for row in explained} == {"x", "y"}


def test_a_search_over_a_renamed_attribute_searches_the_family_parameter():
    program = "SELECT * FROM t TO TRAIN BoostedTreesClassifier WITH model.n_trees = CHOICE(5, 10) "
    (statement,) = analyze(parse(program + "LABEL y INTO m;"))
    assert statement.space == {
        "train.num_boost_round": {"kind": "choice", "type": "int", "values": [5, 10]}
    }
    assert "train.num_boost_round" not in statement.attributes


@pytest.mark.parametrize(
    ("check", "data"),
    [
        (kmeans_document, b"\x80\x04pickle"),
        (kmeans_document, b'{"mean": [0], "scale": [1], "centers": [[true]]}'),
        (kmeans_document, b'{"mean": [0, 1], "scale": [1, 1], "centers": [[0]]}'),
        (one_class_document, b'{"mean": [0], "scale": [1], "landmarks": [[0]]}'),
        (
            one_class_document,
            b'{"mean": [0], "scale": [1], "landmarks": [[0]], "gamma": -1, "threshold": 1}',
        ),
    ],
)
def test_a_tampered_model_is_refused_before_use(check, data):
    with pytest.raises(ModelError, match="is invalid"):
        check(data)


# XGBRanker without a query column ------------------------------------------------------------


def test_xgbranker_without_a_query_column_is_checked_with_a_warning(capsys):
    """SQLFlow's XGBRanker as SQLFlow writes it (estimators#21): every row one query."""
    (statement,) = analyze(
        parse("SELECT * FROM boston.train\nTO TRAIN xgboost.XGBRanker\nLABEL rad\nINTO m;")
    )
    assert statement.attributes["objective"] == "rank:pairwise"
    assert "train.group_column" not in statement.attributes
    assert capsys.readouterr().err == (
        "<input>:2:10: warning: xgboost.XGBRanker without train.group_column "
        "ranks every row as one query, as SQLFlow does; add train.group_column = '<column>' to "
        "rank the rows of each query\n"
    )
    analyze(
        parse("SELECT * FROM t TO TRAIN xgboost.gbtree WITH objective = rank:ndcg LABEL y INTO m;")
    )
    assert "<input>:1:46: warning: objective rank:ndcg without train.group_column" in (
        capsys.readouterr().err
    )


@pytest.fixture
def documents(duckdb_url):
    """docs: 200 rows whose relevance (0 to 4) grows with signal; noise is noise. A fifth
    of them (part 'test') are held out."""
    rng = np.random.default_rng(5)
    signal, noise = rng.normal(size=200), rng.normal(size=200)
    relevance = np.clip(np.round(1.2 * signal + 2 + 0.3 * rng.normal(size=200)), 0, 4)
    ds = connect(duckdb_url)
    ds.write_table(
        ["docs"],
        {
            "id": np.arange(200),
            "part": np.where(np.arange(200) % 5 == 0, "test", "train").astype(object),
            "signal": signal,
            "noise": noise,
            "relevance": relevance.astype(np.int64),
        },
    )
    ds.close()
    return relevance[np.arange(200) % 5 == 0]


def test_xgbranker_without_a_query_column_ranks_all_rows_as_one_query(
    documents, duckdb_url, capsys
):
    from sqlml.metric_values import ranker_metrics

    program = (
        "SELECT signal, noise, relevance FROM docs WHERE part = 'train'\n"
        "TO TRAIN xgboost.XGBRanker WITH train.num_boost_round = 20, max_depth = 3\n"
        "LABEL relevance INTO ranker;\n"
        "SELECT id, signal, noise FROM docs WHERE part = 'test'\n"
        "TO PREDICT ranked.score USING ranker;\n"
        "SELECT signal, noise, relevance FROM docs WHERE part = 'test'\n"
        "TO EVALUATE ranker LABEL relevance INTO ranked_ndcg;"
    )
    _, err = run(duckdb_url, program, capsys)
    assert "XGBRanker without train.group_column ranks every row as one query" in err
    scores = np.array([row[0] for row in rows(duckdb_url, "SELECT score FROM ranked ORDER BY id")])
    one = np.zeros(len(scores), dtype=np.int64)
    ndcg = ranker_metrics(documents, scores, one)["ndcg"]
    rng = np.random.default_rng(0)
    chance = np.mean(
        [ranker_metrics(documents, rng.random(len(one)), one)["ndcg"] for _ in range(20)]
    )
    assert ndcg >= 0.95 and ndcg > chance + 0.05, (ndcg, chance)
    # The best-scored tenth of the rows are among the most relevant.
    top = np.argsort(-scores)[: len(scores) // 10]
    assert documents[top].min() >= 3, documents[top]
    (evaluated,) = rows(duckdb_url, "SELECT ndcg FROM ranked_ndcg")
    assert evaluated[0] == pytest.approx(ndcg)
    ds = connect(duckdb_url)
    try:
        metadata = ModelStore(ds).load("ranker").metadata
    finally:
        ds.close()
    assert metadata["validation"]["rows"] == 32  # a fifth of the one query's rows held out
    assert metadata["metrics"]["validation_ndcg"] > 0.9


AUTO = (
    "SELECT * FROM blobs TO TRAIN sqlflow_models.AutoClassifier WITH model.hidden_units = [8], "
    "train.epoch = 3, train.batch_size = 8{} LABEL k INTO auto_model;"
)


def stored_metadata(url: str, model: str) -> dict:
    ds = connect(url)
    try:
        return ModelStore(ds).load(model).metadata
    finally:
        ds.close()


def test_auto_classifier_keeps_the_network_of_least_validation_loss(blobs, duckdb_url, capsys):
    # model.hidden_units given: the search tries the three learning rates, the fast one best
    _, err = run(duckdb_url, AUTO.format(""), capsys)
    assert "a grid of its networks" in err
    metadata = stored_metadata(duckdb_url, "auto_model")
    search = metadata["network_search"]
    tried = [c["optimizer.learning_rate"] for c in search["candidates"]]
    losses = [c["validation_loss"] for c in search["candidates"]]
    assert tried == [0.003, 0.01, 0.1]
    assert search["winner"] == int(np.argmin(losses)) == 2
    assert losses[2] < losses[0] / 2  # clearly better
    assert (search["rows"], search["kept"], search["held_out_rows"]) == (
        "validation",
        "as trained",
        12,
    )
    # kept as trained: the stored model is the winner, measured on the same rows
    assert metadata["metrics"]["validation_log_loss"] == pytest.approx(losses[2], rel=1e-4)
    assert metadata["attributes"]["optimizer.learning_rate"] == 0.1
    assert metadata["attributes"]["model.hidden_units"] == [8]
    described = dict(
        (row["property"], row["value"])
        for row in run(duckdb_url, "DESCRIBE MODEL auto_model;", capsys)[0]
    )
    assert json.loads(described["attributes"])["optimizer.learning_rate"] == 0.1

    run(duckdb_url, AUTO.format(""), capsys)  # the same seeds: the same search
    again = stored_metadata(duckdb_url, "auto_model")["network_search"]["candidates"]
    assert [c["validation_loss"] for c in again] == losses

    run(duckdb_url, "SELECT x, y FROM blobs TO PREDICT found.k USING auto_model;", capsys)
    assert [row[0] for row in rows(duckdb_url, "SELECT k FROM found ORDER BY rowid")] == list(blobs)


def test_auto_classifier_without_validation_rows_chooses_on_training_rows(
    blobs, duckdb_url, capsys
):
    run(duckdb_url, AUTO.format(", validation.split = 0"), capsys)
    metadata = stored_metadata(duckdb_url, "auto_model")
    search = metadata["network_search"]
    assert (search["rows"], search["kept"]) == ("0.2 of the training rows", "retrained")
    assert search["held_out_rows"] == 12  # 4 of each class's 20
    assert metadata["rows"] == 60 and metadata["validation"] is None
    assert metadata["attributes"]["optimizer.learning_rate"] == 0.1


def test_auto_classifier_reports_each_network_and_stops_between_them(blobs, duckdb_url):
    from sqlml.runtime.cancel import Cancelled, Token
    from sqlml.runtime.context import Context
    from sqlml.runtime.progress import Progress
    from sqlml.statements.train import handler as training

    token, opened = Token(), []

    class Bar:
        def __init__(self, description: str) -> None:
            self.description = description

        def update(self, advance: int, metrics) -> None:
            if self.description == "searching networks":  # the first network trained
                assert set(metrics) == {"validation_loss"}
                token.cancel("a test")

        def close(self) -> None:
            pass

    class Sink:
        def bar(self, description: str, total, unit: str) -> Bar:
            opened.append((description, total, unit))
            return Bar(description)

    (statement,) = analyze(parse(AUTO.format("")))
    ds = connect(duckdb_url)
    try:
        with pytest.raises(Cancelled):
            training.train_and_save(statement, Context(ds, token, Progress(Sink())))
        assert not ModelStore(ds).list()
    finally:
        ds.close()
    searching = ("searching networks", 3, "candidates")
    compiling = ("compiling the network", None, "")  # the first network's first batch
    shown = [o for o in opened if o[0] not in ("reading", "loading TensorFlow")]
    assert shown == [searching, compiling, ("training", 3, "epochs")]


def test_auto_classifier_continues_the_network_it_chose(blobs, duckdb_url, capsys):
    run(duckdb_url, AUTO.format(""), capsys)
    more = "SELECT * FROM blobs TO TRAIN sqlflow_models.AutoClassifier WITH train.epoch = 1 "
    run(duckdb_url, more + "LABEL k USING auto_model INTO more;", capsys)
    run(duckdb_url, more + "LABEL k USING more INTO yet_more;", capsys)  # records no rate
    metadata = stored_metadata(duckdb_url, "yet_more")
    assert "network_search" not in metadata
    assert metadata["attributes"]["model.hidden_units"] == [8]
    run(duckdb_url, "SELECT x, y FROM blobs TO PREDICT found.k USING yet_more;", capsys)
    assert [row[0] for row in rows(duckdb_url, "SELECT k FROM found ORDER BY rowid")] == list(blobs)
