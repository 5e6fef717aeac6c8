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

from sqlml.cli import main
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.runtime.datasource import connect
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
