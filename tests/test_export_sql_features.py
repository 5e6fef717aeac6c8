"""Models of derived feature columns inside queries and as exported SQL: BUCKET, CATEGORY_ID
through a vocabulary (of text, of numbers, cut by a bucket_size) or of integer ids, and
INDICATOR compile into SQL that reads each row as TO PREDICT does, NULLs and categories
unseen in training included, on every database; what portable SQL cannot compute exactly
(CATEGORY_HASH, numbers parsed from text...) is refused, naming the feature column."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import KINDS, assert_close, datasource_url, fetch_rows
from sqlglot import exp

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import Datasource, connect
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.models import compiled_features
from sqlml.models.compiled import NOT_COMPILED_HINT
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime.features_apply import transform

ROWS, TRAINED = 300, 240  # the models learn from the first rows; the others hold new categories
PREFIX = f"sf{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs
# 0.1 and 0.7 are no float32s (the nearest are above and below them): TO PREDICT compares
# x's float32 with them
BOUNDARIES = "[-1, 0.1, 0.7]"

# Text categories that a collation ignoring case, accents or trailing spaces (MariaDB's
# default) would merge, and the empty text; values that only the scored rows hold, two of
# them holding the separator of the lists that the trees' splits search.
PLANS = ["basic", "plus", "Pro", "pro", "pro ", "café", "cafe", ""]
UNSEEN = ["gold", "PLUS", "cafe|café", "|Pro"]

# name: (training, what TO PREDICT writes, whether it writes probabilities too), one model
# of each way a category compiles.
MODELS = {
    # trees: the bucket's id, the vocabulary's index, the integer id
    "tree": (
        "SELECT x, plan, n, churn FROM sf_rows WHERE id < {trained} TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 5, objective = 'binary:logistic', max_depth = 4 "
        "COLUMN x, BUCKET(x, {boundaries}), CATEGORY_ID(plan), CATEGORY_ID(n, 10) "
        "LABEL churn INTO sf_tree;",
        "churn",
        True,
    ),
    # a linear booster: every category one-hot, a vocabulary of numbers
    "linear": (
        "SELECT x, plan, n, kind FROM sf_rows WHERE id < {trained} TO TRAIN xgboost.gblinear "
        "WITH train.num_boost_round = 5, objective = 'multi:softprob' "
        "COLUMN x, BUCKET(x, {boundaries}), INDICATOR(plan), CATEGORY_ID(n) LABEL kind "
        "INTO sf_linear;",
        "kind",
        True,
    ),
    # a vocabulary cut to the 3 most frequent values, the others sharing the last id
    "regression": (
        "SELECT x, plan, n, y FROM sf_rows WHERE id < {trained} TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 5, max_depth = 4 "
        "COLUMN x, CATEGORY_ID(plan, 4), INDICATOR(BUCKET(n, [3, 6])) LABEL y "
        "INTO sf_regression;",
        "y",
        False,
    ),
    # k-means: buckets and categories one-hot (a NULL number is a mean: rows without)
    "kmeans": (
        "SELECT x, plan FROM sf_rows WHERE id < {trained} AND x IS NOT NULL TO TRAIN KMeans "
        "WITH model.n_clusters = 3 COLUMN x, BUCKET(x, {boundaries}), CATEGORY_ID(plan) "
        "INTO sf_kmeans;",
        "cluster",
        True,
    ),
}
SCORED = {"kmeans": "x IS NOT NULL"}  # the rows each model's TO PREDICT scores (else all)
# thresholds of a tree's splits: below, between and at the ids (a category's ids are below 12)
THRESHOLDS = [np.float32(t) for t in np.arange(-1, 12.5, 0.5)]


def _named(sql: str) -> str:
    """``sql`` with this run's names: each ``sf_`` (tables, views, models) prefixed so."""
    return sql.replace("sf_", PREFIX)


def _rows() -> dict[str, np.ndarray]:
    """Numbers with NULLs and values at and next to the buckets' boundaries (x), text
    categories with NULLs and values the training rows lack (plan), integers with NULLs (n);
    a text class, three classes and a value to learn from them."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=ROWS)
    x[rng.random(ROWS) < 0.1] = np.nan  # NaN is written as NULL
    edges = [-1.0]
    for boundary in (0.1, 0.7):  # the float32s around each, and the midpoint between them
        nearest = np.float32(boundary)
        down, up = np.nextafter(nearest, np.float32(0)), np.nextafter(nearest, np.float32(1))
        middle = [(float(nearest) + float(other)) / 2 for other in (down, up)]
        edges += [boundary, *map(float, (nearest, down, up)), *middle]
    x[ROWS - 20 : ROWS - 20 + len(edges)] = edges  # scored only
    x[TRAINED - 20 : TRAINED - 20 + len(edges)] = edges  # trained on too
    plan = np.array(PLANS, dtype=object)[rng.integers(0, len(PLANS), ROWS)]
    plan[rng.random(ROWS) < 0.1] = None
    plan[TRAINED + 5 : TRAINED + 5 + 3 * len(UNSEEN)] = UNSEEN * 3
    n = rng.integers(0, 10, ROWS).astype(np.float64)
    n[rng.random(ROWS) < 0.1] = np.nan
    seen = np.nan_to_num(x)
    special = np.isin(plan, ["pro", "plus", "café"])
    score = seen + np.where(special, 1.0, 0.0) - np.nan_to_num(n, nan=5) / 5
    return {
        "id": np.arange(ROWS),
        "x": x,
        "plan": plan,
        "n": n,
        "churn": np.where(score > 0, "yes", "no").astype(object),
        "kind": np.where(score > 0.8, "high", np.where(score > -0.8, "mid", "low")).astype(object),
        "y": score + rng.normal(scale=0.1, size=ROWS),
    }


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", _named(program), "--datasource", url])
    assert status == 0, capsys.readouterr().err


def _fetch(ds: Datasource, query: str) -> list[tuple]:
    result = ds.execute(_named(query))
    assert result is not None
    return [tuple(row) for row in result.rows]


def _columns(ds: Datasource, table: str) -> list[str]:
    result = ds.execute(_named(f"SELECT * FROM {table} WHERE 1 = 0"))
    assert result is not None
    return result.columns


@pytest.fixture(params=KINDS, scope="module")
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A datasource of each kind holding the rows (``sf_rows``), the models of MODELS and
    TO PREDICT's table of each (``sf_<name>_p``)."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
    ds.close()
    program = []
    for name, (training, label, probabilities) in MODELS.items():
        extra = "predict.extra_outputs = 'probabilities', " if probabilities else ""
        where = f" WHERE {SCORED[name]}" if name in SCORED else ""
        program += [
            training.format(trained=TRAINED, boundaries=BOUNDARIES),
            f"SELECT id, x, plan, n FROM sf_rows{where} TO PREDICT sf_{name}_p.{label} "
            f"WITH {extra}output.replace = true USING sf_{name};",
        ]
    assert main(["-e", _named("\n".join(program)), "--datasource", url]) == 0
    yield url
    ds = connect(url)
    try:
        ds.execute(_named("DROP VIEW IF EXISTS sf_tree_predictions"))
        ds.execute(_named("DROP VIEW IF EXISTS sf_result"))
        for table in ["rows", *(f"{name}_p" for name in MODELS)]:
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    finally:
        ds.close()
    dropped = " ".join(f"DROP MODEL IF EXISTS sf_{name};" for name in MODELS)
    main(["-e", _named(dropped), "--datasource", url])


def _query(url: str, select: str, capsys) -> list[tuple]:
    """The rows of ``select`` through a view that sqlml creates (its PREDICT calls compiled
    into SQL on every database), read plainly."""
    _run(url, f"CREATE VIEW sf_result AS {select};", capsys)
    ds = connect(url)
    try:
        return _fetch(ds, "SELECT * FROM sf_result ORDER BY 1")
    finally:
        ds.execute(_named("DROP VIEW sf_result"))
        ds.close()


@pytest.mark.parametrize("name", MODELS)
def test_inputs_are_to_predicts_matrix(trained, name):
    """Each compiled input equals, as float32, the matrix TO PREDICT gives the model; it is
    missing, and below a tree's thresholds (between and at the ids), where that is."""
    ds = connect(trained)
    try:
        stored = ModelStore(ds).load(f"{PREFIX}{name}")
        one_hot = name in ("linear", "kmeans")
        inputs = compiled_features.matrix(stored, one_hot=one_hot)
        found = _fetch(ds, f"SELECT {_sql(ds, inputs.values)} FROM sf_rows ORDER BY id")
        conditions = [each.missing for each in inputs.inputs]
        conditions += [each.below(t) for t in THRESHOLDS for each in inputs.inputs]
        flags = [
            exp.Case(
                ifs=[exp.If(this=c, true=exp.Literal.number(1))], default=exp.Literal.number(0)
            )
            for c in conditions
        ]
        held = _fetch(ds, f"SELECT {_sql(ds, flags)} FROM sf_rows ORDER BY id")
        columns = ds.read(_named("SELECT x, plan, n FROM sf_rows ORDER BY id"))
    finally:
        ds.close()
    features = [FeatureColumn.from_dict(item) for item in stored.metadata["features"]]
    expected = transform(columns, features).matrix(one_hot=one_hot)[0]
    got = np.array([[np.nan if v is None else v for v in row] for row in found], np.float64)
    assert inputs.columns == (["x", "plan"] if name == "kmeans" else ["x", "plan", "n"])
    np.testing.assert_array_equal(got.astype(np.float32), expected)
    wanted = [np.isnan(expected)] + [expected < t for t in THRESHOLDS]  # NaN: never below
    np.testing.assert_array_equal(
        np.array(held, dtype=np.int64), np.hstack(wanted).astype(np.int64)
    )


def _sql(ds: Datasource, expressions: list[exp.Expression]) -> str:
    return ", ".join(expression.sql(dialect=ds.dialect) for expression in expressions)


def test_classes_and_probabilities_equal_to_predict(trained, capsys):
    found = _query(
        trained,
        "SELECT id, PREDICT(sf_tree) AS c, PREDICT_PROBA(sf_tree, 'yes') AS p, "
        "PREDICT_PROBA(sf_tree, 'no') AS q FROM sf_rows",
        capsys,
    )
    expected = fetch_rows(
        trained, _named("SELECT id, churn, churn_yes, churn_no FROM sf_tree_p ORDER BY id")
    )
    assert [row[:2] for row in found] == [row[:2] for row in expected]
    assert {row[1] for row in found} == {"yes", "no"}
    assert_close([row[2:] for row in found], [row[2:] for row in expected])


def test_linear_booster_of_one_hot_categories(trained, capsys):
    found = _query(
        trained,
        "SELECT id, PREDICT(sf_linear) AS c, PREDICT_PROBA(sf_linear, 'high') AS h, "
        "PREDICT_PROBA(sf_linear, 'mid') AS m, PREDICT_PROBA(sf_linear, 'low') AS l "
        "FROM sf_rows",
        capsys,
    )
    expected = fetch_rows(
        trained,
        _named("SELECT id, kind, kind_high, kind_mid, kind_low FROM sf_linear_p ORDER BY id"),
    )
    assert [row[:2] for row in found] == [row[:2] for row in expected]
    assert_close([row[2:] for row in found], [row[2:] for row in expected])


def test_regression_values(trained, capsys):
    found = _query(trained, "SELECT id, PREDICT(sf_regression) AS y FROM sf_rows", capsys)
    expected = fetch_rows(trained, _named("SELECT id, y FROM sf_regression_p ORDER BY id"))
    assert [row[0] for row in found] == [row[0] for row in expected]
    assert_close([row[1] for row in found], [row[1] for row in expected])


def test_kmeans_of_categories(trained, capsys):
    found = _query(
        trained,
        "SELECT id, PREDICT(sf_kmeans) AS c, PREDICT_PROBA(sf_kmeans, '1') AS p FROM sf_rows "
        "WHERE x IS NOT NULL",
        capsys,
    )
    expected = fetch_rows(
        trained, _named("SELECT id, cluster, cluster_1 FROM sf_kmeans_p ORDER BY id")
    )
    assert [(i, int(c)) for i, c, _ in found] == [(i, int(c)) for i, c, _ in expected]
    assert len({c for _, c, _ in found}) == 3
    assert_close([row[2] for row in found], [row[2] for row in expected])


def test_exported_view_predicts_like_to_predict(trained, tmp_path, capsys):
    file = tmp_path / "tree.sql"
    model = f"{PREFIX}tree"
    args = ["export", model, str(file), "--format", "sql", "--table", f"{PREFIX}rows"]
    assert main([*args, "--datasource", trained]) == 0, capsys.readouterr().err
    text = file.read_text()
    assert "-- it reads the columns x, plan, n (NULL as TO PREDICT reads it)" in text
    ds = connect(trained)
    try:
        ds.execute(text.rstrip().rstrip(";"))
        found = _fetch(ds, "SELECT id, churn FROM sf_tree_predictions ORDER BY id")
        assert found == _fetch(ds, "SELECT id, churn FROM sf_tree_p ORDER BY id")
    finally:
        ds.execute(_named("DROP VIEW IF EXISTS sf_tree_predictions"))
        ds.close()


def test_category_hash_is_refused_naming_the_feature(tmp_path: Path, capsys):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
    ds.close()
    _run(
        url,
        "SELECT x, plan, y FROM sf_rows TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 "
        "COLUMN x, CATEGORY_HASH(plan, 16) LABEL y INTO sf_hashed;",
        capsys,
    )
    reason = (
        f"model {PREFIX}hashed cannot be compiled into SQL: its feature column "
        "CATEGORY_HASH(plan) hashes its categories (CATEGORY_HASH), which portable SQL cannot "
        "do as sqlml does"
    )
    view = _named("CREATE VIEW sf_v AS SELECT id, PREDICT(sf_hashed) AS p FROM sf_rows;")
    at = view.index("PREDICT") + 1  # a view's call is compiled on every database
    assert main(["-e", view, "--datasource", url])
    assert f":1:{at}: error: {reason}" in capsys.readouterr().err
    file = tmp_path / "hashed.sql"
    assert main(["export", f"{PREFIX}hashed", str(file), "--format", "sql", "--datasource", url])
    assert reason in capsys.readouterr().err and not file.exists()
    ds = connect(url)
    try:
        program = "SELECT 1;\n" + view
        found = errors_of(check_program(program, ds.dialect, datasource=ds))
    finally:
        ds.close()
    assert [(e.line, e.column) for e in found] == [(2, at)]
    assert found[0].message.startswith(reason)


def _stored(feature: FeatureColumn, types: dict[str, str]) -> StoredModel:
    """A model of one feature column (its bytes never read)."""
    metadata = {"features": [dataclasses.asdict(feature)], "column_types": types}
    return StoredModel("m", 1, metadata, b"")


@pytest.mark.parametrize(
    ("feature", "types", "reason"),
    [
        (
            FeatureColumn(
                "cross",
                None,
                {"hash_bucket_size": 8},
                [FeatureColumn("category_id", "a"), FeatureColumn("category_id", "b")],
            ),
            {"a": "text", "b": "text"},
            "CROSS(a, b) hashes its categories (CROSS)",
        ),
        (
            FeatureColumn("dense", "v", {"shape": 3, "delimiter": ","}),
            {"v": "text"},
            "v reads 3 numbers a row from text (DENSE)",
        ),
        (
            FeatureColumn("numeric", "v", {"shape": 1}),
            {"v": "text"},
            "v reads numbers from text (NUMERIC)",
        ),
        (
            FeatureColumn("sparse", "v", {"shape": 9, "delimiter": ","}),
            {"v": "text"},
            "v reads index:value lists from text (SPARSE)",
        ),
        (
            FeatureColumn("category_id", "v", {"bucket_size": 5}),
            {"v": "text"},
            "v reads integer ids from text (CATEGORY_ID)",
        ),
        (
            FeatureColumn(
                "category_id", "v", {"bucket_size": 3, "delimiter": ",", "vocabulary": ["a", "b"]}
            ),
            {"v": "text"},
            "v reads several categories a row (CATEGORY_ID)",
        ),
        (
            FeatureColumn("category_id", "v", {"bucket_size": 3, "vocabulary": ["1", "True"]}),
            {"v": "numbers"},
            "v holds the category 'True', which no number compares with exactly in SQL",
        ),
        (
            FeatureColumn("category_id", "v", {"bucket_size": 2, "vocabulary": ["a"]}),
            {},
            "v reads v as categories, and the model (trained by an older sqlml) does not record",
        ),
    ],
    ids=[
        "cross",
        "dense",
        "text-numbers",
        "sparse",
        "text-ids",
        "delimiter",
        "booleans",
        "untyped",
    ],
)
def test_what_portable_sql_cannot_compute_is_refused(feature, types, reason):
    with pytest.raises(ModelError) as refused:
        compiled_features.matrix(_stored(feature, types))
    assert (
        f"model m cannot be compiled into SQL: its feature column {reason}" in refused.value.message
    )
    assert refused.value.hint == NOT_COMPILED_HINT


def test_buckets_at_the_ends_of_float32s_range(tmp_path: Path):
    """Boundaries beyond float32's range, and values next to its largest, fall in TO
    PREDICT's buckets."""
    largest = float(np.finfo(np.float32).max)
    below = float(np.nextafter(np.float32(largest), np.float32(0)))
    values = [-largest, -3.4e38, -1.0, 0.0, 3.4e38, below, (below + largest) / 2, largest]
    values += [largest + 2.0**102, np.nan]  # rounds to the largest float32; NULL
    feature = FeatureColumn(
        "bucket", None, {"boundaries": [-1e39, -largest, 3.4e38, largest, 1e39]},
        [FeatureColumn("numeric", "v", {"shape": 1})],
    )  # fmt: skip
    stored = _stored(feature, {"v": "numbers"})
    ds = connect(datasource_url("duckdb", tmp_path))
    try:
        ds.write_table(["b"], {"i": np.arange(len(values)), "v": np.array(values)}, replace=True)
        for one_hot in (False, True):
            inputs = compiled_features.matrix(stored, one_hot=one_hot).values
            selected = ", ".join(value.sql(dialect=ds.dialect) for value in inputs)
            found = _fetch(ds, f"SELECT {selected} FROM b ORDER BY i")
            got = np.array([[np.nan if v is None else v for v in row] for row in found])
            columns = ds.read("SELECT v FROM b ORDER BY i")
            expected = transform(columns, [feature]).matrix(one_hot=one_hot)[0]
            np.testing.assert_array_equal(got.astype(np.float32), expected)
    finally:
        ds.close()
