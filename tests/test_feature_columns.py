"""Feature columns: argument checks, derivation from the data, and training with them."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from sqlml import ir
from sqlml.backends.local.codegen import to_python
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.ir import FeatureColumn
from sqlml.runtime.features_apply import stable_hash, transform
from sqlml.runtime.features_derive import derive
from sqlml.semantics import analyze


def train(columns: str, estimator: str = "DNNClassifier") -> ir.TrainStatement:
    """The IR of a TO TRAIN statement whose COLUMN clause (on line 2) is ``columns``."""
    text = f"SELECT * FROM t TO TRAIN {estimator}\nCOLUMN {columns}\nLABEL y INTO m;"
    (statement,) = analyze(parse(text))
    assert isinstance(statement, ir.TrainStatement)
    return statement


# COLUMN starts line 2, so the first expression is at column 8.
@pytest.mark.parametrize(
    ("columns", "estimator", "line", "column", "message", "hint"),
    [
        ("a, BUCKET(b, [18, 65, 40])", "DNNClassifier", 2, 30,
         "BUCKET boundaries must be strictly ascending: 40 follows 65",
         "list each boundary once, smallest first"),
        ("a,\n  BUCKET(b, [5,\n    1])", "DNNClassifier", 4, 5,
         "BUCKET boundaries must be strictly ascending: 1 follows 5", None),
        ("BUCKET(b, [1, 'x'])", "DNNClassifier", 2, 22,
         "BUCKET boundaries must be numbers (got 'x')", None),
        ("BUCKET(b, 5)", "DNNClassifier", 2, 18,
         "BUCKET's boundaries must be a list of numbers such as [18, 65] (got 5)",
         "usage: BUCKET(NUMERIC(column) | column, [boundaries...])"),
        ("BUCKET(NUMERIC(a, 3), [1])", "DNNClassifier", 2, 26,
         "BUCKET takes one number per row; NUMERIC's shape must be 1 here", None),
        ("a, EMBEDDING(CATEGORY_ID(c, 10), 8)", "xgboost.gbtree", 2, 11,
         "xgboost.gbtree cannot take EMBEDDING columns",
         "xgboost.gbtree takes NUMERIC, DENSE, SPARSE, CATEGORY_ID, CATEGORY_HASH, BUCKET, "
         "INDICATOR; Keras estimators such as DNNClassifier take every kind"),
        ("INDICATOR(CROSS([a, b], 10))", "xgboost.dart", 2, 18,
         "xgboost.dart cannot take CROSS columns", None),
        ("SEQ_CATEGORY_ID(c, 5)", "xgboost.gblinear", 2, 8,
         "xgboost.gblinear cannot take SEQ_CATEGORY_ID columns", None),
        ("EMBEDING(c, 8)", "DNNClassifier", 2, 8,
         "unknown feature column EMBEDING", "did you mean EMBEDDING?"),
        ("NUMERC(a)", "DNNClassifier", 2, 8,
         "unknown feature column NUMERC", "did you mean NUMERIC?"),
        ("CATEGORY_ID(c, 0)", "DNNClassifier", 2, 23,
         "CATEGORY_ID's bucket_size must be a positive integer (got 0)",
         "usage: CATEGORY_ID(column[, bucket_size[, delimiter]])"),
        ("CATEGORY_HASH(c, 10, ',', 3)", "DNNClassifier", 2, 34,
         "CATEGORY_HASH takes at most 3 arguments, got 4", None),
        ("DENSE()", "DNNClassifier", 2, 8,
         "DENSE needs its column argument", "usage: DENSE(column[, shape[, delimiter[, dtype]]])"),
        ("DENSE(c, [2, 0])", "DNNClassifier", 2, 17,
         "DENSE's shape must be a positive integer or a list of them (got [2, 0])", None),
        ("DENSE(c, 3, '')", "DNNClassifier", 2, 20,
         "DENSE's delimiter must be a non-empty string such as ',' (got '')", None),
        ("NUMERIC(3)", "DNNClassifier", 2, 16,
         "NUMERIC's column must be a column name (got 3)", None),
        ("EMBEDDING(NUMERIC(a), 8)", "DNNClassifier", 2, 18,
         "EMBEDDING's category must be a column name or one of CATEGORY_ID, SEQ_CATEGORY_ID, "
         "CATEGORY_HASH, WEIGHTED_CATEGORY, BUCKET, CROSS (got NUMERIC(...))", None),
        ("EMBEDDING(c, 8, 'max')", "DNNClassifier", 2, 24,
         "EMBEDDING's combiner must be one of 'mean', 'sum', 'sqrtn' (got 'max')", None),
        ("WEIGHTED_CATEGORY(BUCKET(a, [1]), w)", "DNNClassifier", 2, 26,
         "WEIGHTED_CATEGORY's category must be a column name or one of CATEGORY_ID, "
         "SEQ_CATEGORY_ID, CATEGORY_HASH (got BUCKET(...))", None),
        ("CROSS([a], 10)", "DNNClassifier", 2, 14,
         "CROSS's columns must be a list of two or more columns (got [a])", None),
        ("CROSS([a, EMBEDDING(b, 2)], 10)", "DNNClassifier", 2, 18,
         "CROSS takes column names, CATEGORY_ID, CATEGORY_HASH, BUCKET (got EMBEDDING(...))",
         None),
        ("CROSS([a, CATEGORY_ID(b, 5, ',')], 10)", "DNNClassifier", 2, 18,
         "CROSS takes one value per row; remove the delimiter", None),
        ("NUMERIC(y)", "DNNClassifier", 2, 16,
         "column y is the LABEL; it cannot also be a feature", "remove y from COLUMN"),
        ("a, NUMERIC(a)", "DNNClassifier", 2, 11, "feature a is listed twice", None),
        ("db.a", "DNNClassifier", 2, 8, "COLUMN takes a column name, not db.a", None),
    ],
)  # fmt: skip
def test_argument_errors_point_at_the_argument(columns, estimator, line, column, message, hint):
    with pytest.raises(CheckError) as caught:
        train(columns, estimator)
    error = caught.value
    assert (error.message, error.line, error.column) == (message, line, column)
    if hint:
        assert error.hint == hint


def test_feature_columns_lower_to_json():
    statement = train(
        'a, EMBEDDING(CATEGORY_ID(c, 100, ","), 8, sum), BUCKET(NUMERIC(d), [1, 5.5]), '
        "CROSS([a, BUCKET(d, [3])], 50), INDICATOR(e), WEIGHTED_CATEGORY(CATEGORY_HASH(f, 10), w), "
        "DENSE(g, [2, 3], ';')"
    )

    def leaf(kind: str, column: str, **params) -> dict:
        return {"kind": kind, "column": column, "params": params, "inputs": [], "target": None}

    def node(kind: str, inputs: list, column: str | None = None, **params) -> dict:
        return {"kind": kind, "column": column, "params": params, "inputs": inputs, "target": None}

    numeric_d = leaf("numeric", "d", shape=1)
    assert [dataclasses.asdict(f) for f in statement.features] == [
        leaf("auto", "a"),
        node(
            "embedding",
            [leaf("category_id", "c", bucket_size=100, delimiter=",")],
            dimension=8,
            combiner="sum",
        ),
        node("bucket", [numeric_d], boundaries=[1, 5.5]),
        node(
            "cross",
            [leaf("category_id", "a"), node("bucket", [numeric_d], boundaries=[3])],
            hash_bucket_size=50,
        ),
        node("indicator", [leaf("category_id", "e")]),
        node("weighted_category", [leaf("category_hash", "f", bucket_size=10)], "w"),
        leaf("dense", "g", shape=6, delimiter=";"),
    ]
    assert [f.name for f in statement.features] == [
        "a",
        "EMBEDDING(c)",
        "BUCKET(d)",
        "CROSS(a, BUCKET(d))",
        "INDICATOR(e)",
        "WEIGHTED_CATEGORY(CATEGORY_HASH(f), w)",
        "g",
    ]
    assert ir.from_dict(statement.to_dict()) == statement


def test_compiled_workflow_rebuilds_the_feature_columns():
    (statement,) = analyze(
        parse("SELECT * FROM t TO TRAIN DNNClassifier COLUMN EMBEDDING(c, 4) LABEL y INTO m;")
    )
    namespace: dict = {}
    exec(to_python([statement], "w"), namespace)  # __name__ is not "__main__": nothing runs
    (step,) = namespace["workflow"].steps
    assert step.params == statement.to_dict()


@pytest.fixture(params=["duckdb_url", "mysql_url"])
def table_url(request: pytest.FixtureRequest, unique_name: str):
    """A datasource URL and the name of a table of mixed columns in it (dropped afterwards)."""
    url = request.getfixturevalue(request.param)
    ds = connect(url)
    ds.write_table(
        [unique_name],
        {
            "n": np.array([0, 1, 2, 3, 4, 5]),
            "x": np.array([0.5, np.nan, 2.0, 3.0, 4.0, 5.0]),
            "s": np.array(["b", "a", "b", "c", None, "b"], dtype=object),
            "d": np.array(["1,2,3", "4, 5, 6", "7,8,9", None, "0,0,0", "1,1,1"], dtype=object),
            "sp": np.array(["0:1.5,3:2", "1:1", "", "2:0.5", "0:1", "6:3"], dtype=object),
            "t": np.array(["2.5", "1", "-3e2", "4", "5", "6"], dtype=object),
            "y": np.array([0, 1, 0, 1, 0, 1]),
        },
    )
    try:
        yield url, unique_name
    finally:
        ds.execute(f"DROP TABLE {unique_name}")
        ds.close()


def test_features_are_derived_from_column_types_and_values(table_url):
    url, table = table_url
    ds = connect(url)
    columns = ds.read(f"SELECT * FROM {table} ORDER BY n")
    ds.close()
    features = derive(columns, [], "y")
    assert features == [
        FeatureColumn("numeric", "n", {"shape": 1}),
        FeatureColumn("numeric", "x", {"shape": 1}),
        FeatureColumn("category_id", "s", {"vocabulary": ["a", "b", "c"], "bucket_size": 4}),
        FeatureColumn("dense", "d", {"shape": 3, "delimiter": ","}),
        FeatureColumn("sparse", "sp", {"shape": 7, "delimiter": ","}),
        FeatureColumn("numeric", "t", {"shape": 1}),
    ]
    arrays = transform(columns, features)
    assert arrays.names == ["n", "x", "s", "d", "sp", "t"]
    np.testing.assert_array_equal(arrays.owners, [0, 1, 3, 3, 3] + [4] * 7 + [5])
    np.testing.assert_array_equal(arrays.numbers[:, 1], [0.5, np.nan, 2, 3, 4, 5])
    np.testing.assert_array_equal(arrays.numbers[:, 2:5][1], [4, 5, 6])
    assert np.isnan(arrays.numbers[3, 2:5]).all()  # a NULL vector
    np.testing.assert_array_equal(arrays.numbers[0, 5:12], [1.5, 0, 0, 2, 0, 0, 0])
    np.testing.assert_array_equal(arrays.numbers[:, 12], [2.5, 1, -300, 4, 5, 6])
    (category,) = arrays.categoricals
    np.testing.assert_array_equal(category.ids[:, 0], [1, 0, 1, 2, 0, 1])
    np.testing.assert_array_equal(category.weights[:, 0], [1, 1, 1, 1, 0, 1])  # NULL: weight 0

    # Prediction applies the stored transform: unseen values go to the last bucket, sparse
    # indices past the shape are dropped.
    later = {name: values[:2].copy() for name, values in columns.items()}
    later["s"] = np.array(["zzz", "c"], dtype=object)
    later["sp"] = np.array(["9:1,1:2", "7:1"], dtype=object)
    again = transform(later, features)
    np.testing.assert_array_equal(again.categoricals[0].ids[:, 0], [3, 2])
    np.testing.assert_array_equal(again.numbers[:, 5:12].sum(axis=1), [2, 0])


def test_column_clauses_are_filled_in_from_the_data(table_url):
    url, table = table_url
    ds = connect(url)
    columns = ds.read(f"SELECT * FROM {table} ORDER BY n")
    ds.close()
    given = train(
        "CATEGORY_ID(s, 3), CATEGORY_ID(n, 10), EMBEDDING(s, 2), "
        "SEQ_CATEGORY_ID(d, 20), CATEGORY_HASH(s, 10), CROSS([s, BUCKET(x, [1])], 1000)"
    ).features
    s_vocabulary = {"vocabulary": ["a", "b", "c"], "bucket_size": 4}
    features = derive(columns, given, "y")
    assert features[:4] == [
        # bucket_size 3: the two most frequent values (b, then a before c) and a bucket for
        # the others
        FeatureColumn("category_id", "s", {"bucket_size": 3, "vocabulary": ["a", "b"]}),
        FeatureColumn("category_id", "n", {"bucket_size": 10}),  # integer ids: kept as they are
        FeatureColumn("embedding", None, {"dimension": 2, "combiner": "mean"},
                      [FeatureColumn("category_id", "s", s_vocabulary)]),
        FeatureColumn("seq_category_id", "d", {"bucket_size": 20, "delimiter": ","}),
    ]  # fmt: skip
    arrays = transform(columns, features)
    assert arrays.names == [
        "s",
        "n",
        "EMBEDDING(s)",
        "SEQ_CATEGORY_ID(d)",
        "CATEGORY_HASH(s)",
        "CROSS(s, BUCKET(x))",
        "sp",  # the selected columns COLUMN leaves out are features too, as in SQLFlow
        "t",
    ]
    first, identity, embedding, sequence, hashed, cross = arrays.categoricals[:6]
    np.testing.assert_array_equal(first.ids[:, 0], [1, 0, 1, 2, 0, 1])
    np.testing.assert_array_equal(identity.ids[:, 0], [0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(embedding.weights[:, 0], [1, 1, 1, 1, 0, 1])  # mean of one
    np.testing.assert_array_equal(sequence.ids[1], [4, 5, 6])
    np.testing.assert_array_equal(sequence.weights[3], [0, 0, 0])  # NULL: no ids
    assert hashed.ids[0, 0] == stable_hash("b") % 10
    assert stable_hash("red") == 11765665226422741261  # the same in every process
    np.testing.assert_array_equal(cross.weights[:, 0], [1, 0, 1, 1, 0, 1])  # x or s NULL
    assert cross.ids[2, 0] == cross.ids[5, 0]  # b, x >= 1
    assert len({cross.ids[0, 0], cross.ids[2, 0], cross.ids[3, 0]}) == 3  # (b, <1), (c, >=1)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ("nope", "feature column nope is not in the result of the SELECT"),
        ("DENSE(d, 2)", "DENSE column d has 3 values in row 1, but its shape is 2"),
        ("CATEGORY_ID(n, 3)", "CATEGORY_ID column n holds '3', which is not an id in [0, 3)"),
        ("NUMERIC(s)", "NUMERIC column s holds 'b', which is not a number"),
        ("SPARSE(sp, 5, ';')", "SPARSE column sp holds '0:1.5,3:2'; expected index:value"),
        ("e", "feature column e is NULL in every row"),
    ],
)
def test_data_errors(duckdb_url, columns, message):
    ds = connect(duckdb_url)
    data = ds.read(
        "SELECT i AS n, 'b' AS s, '1,2,3' AS d, '0:1.5,3:2' AS sp, NULL::VARCHAR AS e, 0 AS y "
        "FROM range(5) t(i)"
    )
    ds.close()
    if columns != "nope":  # the feature's column alone: the others would be features too
        data = {n: data[n] for n in data if n == "y" or re.search(rf"\b{n}\b", columns)}
    with pytest.raises(ModelError) as caught:
        transform(data, derive(data, train(columns).features, "y"))
    assert caught.value.message.startswith(message)
    if columns == "nope":
        assert caught.value.hint == "the SELECT returns: n, s, d, sp, e, y"


def churn_columns(rows: int = 1000) -> dict[str, np.ndarray]:
    """Customers who churn by their plan, contract and region; tenure and charges are noise.

    Churn is (plan + contract) even, flipped in the south, then 5% of labels flipped:
    the categories explain 95% of the labels, the numbers none of them.
    """
    rng = np.random.default_rng(7)
    plans = np.array(["basic", "plus", "premium", "family"], dtype=object)
    contracts = np.array(["monthly", "yearly", "two_year"], dtype=object)
    regions = np.array(["north", "south", "east", "west"], dtype=object)
    plan, contract, region = (
        rng.integers(0, 4, rows),
        rng.integers(0, 3, rows),
        rng.integers(0, 4, rows),
    )
    churn = (((plan + contract) % 2 == 0) ^ (region == 1)) ^ (rng.random(rows) < 0.05)
    return {
        "id": np.arange(rows),
        "plan": plans[plan],
        "contract": contracts[contract],
        "region": regions[region],
        "tenure": rng.integers(1, 73, rows),
        "charges": np.round(rng.normal(70, 20, rows), 2),
        "churn": np.where(churn, "yes", "no").astype(object),
    }


TRAIN_CHURN = {
    "xgboost derived": """
        SELECT plan, contract, region, tenure, charges, churn FROM churn_train
        TO TRAIN xgboost.gbtree WITH train.num_boost_round = 50 LABEL churn INTO m;
    """,
    "xgboost numbers only": """
        SELECT tenure, charges, churn FROM churn_train
        TO TRAIN xgboost.gbtree WITH train.num_boost_round = 50 LABEL churn INTO m;
    """,
    "dnn feature columns": """
        SELECT * FROM churn_train
        TO TRAIN DNNClassifier WITH model.hidden_units = [32, 16], train.epoch = 20
        COLUMN EMBEDDING(CATEGORY_ID(plan, 8), 4), INDICATOR(contract), region,
               BUCKET(tenure, [12, 24, 48]), CROSS([plan, contract], 32), charges
        LABEL churn INTO m;
    """,
}


@pytest.fixture(scope="module")
def churn_accuracy(tmp_path_factory: pytest.TempPathFactory):
    """Train on 800 customers, predict the 200 held out; the accuracy of each model."""
    url = f"duckdb:///{tmp_path_factory.mktemp('churn') / 'churn.duckdb'}"
    columns = churn_columns()
    held_out = columns["id"] % 5 == 0
    ds = connect(url)
    ds.write_table(["churn_train"], {k: v[~held_out] for k, v in columns.items()})
    ds.write_table(["churn_test"], {k: v[held_out] for k, v in columns.items()})
    ds.close()

    def accuracy(name: str) -> float:
        program = TRAIN_CHURN[name] + "SELECT * FROM churn_test TO PREDICT pred.churn USING m;"
        assert main(["-e", program, "--datasource", url]) == 0
        ds = connect(url)
        result = ds.execute("SELECT * FROM pred ORDER BY id")
        truth = ds.execute("SELECT churn FROM churn_test ORDER BY id").rows
        ds.close()
        assert result.columns == ["id", "plan", "contract", "region", "tenure", "charges", "churn"]
        assert [row[0] for row in result.rows] == list(range(0, 1000, 5))
        return float(np.mean([row[-1] == t for row, (t,) in zip(result.rows, truth, strict=True)]))

    return accuracy


def test_categories_make_the_difference(churn_accuracy):
    """Both models reach 0.85 with the categories; without them, the base rate (~0.5)."""
    churned = np.mean(churn_columns()["churn"][::5] == "yes")
    base_rate = max(churned, 1 - churned)
    numbers_only = churn_accuracy("xgboost numbers only")
    assert numbers_only < base_rate + 0.1, numbers_only
    assert churn_accuracy("xgboost derived") >= 0.85
    assert churn_accuracy("dnn feature columns") >= 0.85
