"""Feature columns as SQLFlow writes them (issue 15): DENSE and SPARSE inside other columns,
their dtype, delimiter and key-value arguments, shapes found from the data, BUCKETIZE,
column-name patterns and COLUMN *: lowered, derived, and trained on end to end."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sqlml import ir
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.ir import FeatureColumn
from sqlml.models.store import ModelStore
from sqlml.runtime.features_apply import transform
from sqlml.runtime.features_derive import derive
from sqlml.runtime.features_expand import check_columns
from sqlml.semantics import analyze


def features(columns: str, estimator: str = "DNNClassifier") -> list[FeatureColumn]:
    """The features of a TO TRAIN statement whose COLUMN clause (on line 2) is ``columns``."""
    text = f"SELECT * FROM t TO TRAIN {estimator}\nCOLUMN {columns}\nLABEL y INTO m;"
    (statement,) = analyze(parse(text))
    assert isinstance(statement, ir.TrainStatement)
    return list(statement.features)


def category(kind: str, column: str, **params) -> FeatureColumn:
    return FeatureColumn(kind, column, params)


KV = '",", "int", ":", "float"'


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ("NUMERIC(DENSE(c, 4))", [category("dense", "c", shape=4, delimiter=",")]),
        ("NUMERIC(SPARSE(c, 10))", [category("sparse", "c", shape=10)]),  # format: the data's
        ('DENSE(c, none, comma, "float")', [category("dense", "c", delimiter=",", dtype="float")]),
        ("DENSE(c)", [category("dense", "c", delimiter=",")]),
        (f"SPARSE(c, 10, {KV})",
         [category("sparse", "c", shape=10, delimiter=",", dtype="int", kv_delimiter=":")]),
        ("CATEGORY_ID(SPARSE(c, 100, COMMA), 10)",
         [category("category_id", "c", bucket_size=10, delimiter=",")]),
        ("CATEGORY_ID(SPARSE(c, 100))",
         [category("category_id", "c", bucket_size=100, delimiter=",")]),
        ("CATEGORY_HASH(DENSE(c, 3, ';', string), 8)",
         [category("category_hash", "c", bucket_size=8, delimiter=";")]),
        ("EMBEDDING(SPARSE(c, 100, '-', int), 4, sum, truncated_normal_initializer)",
         [FeatureColumn("embedding", None,
                        {"dimension": 4, "combiner": "sum", "initializer": "truncated_normal"},
                        [category("category_id", "c", delimiter="-", bucket_size=100)])]),
        (f"INDICATOR(SPARSE(c, 10, {KV}))",
         [FeatureColumn("indicator", None, {}, [FeatureColumn("weighted_category", "c", {}, [
             category("category_id", "c", delimiter=",", kv_delimiter=":", bucket_size=10)])])]),
        (f"WEIGHTED_CATEGORY(CATEGORY_ID(SPARSE(c, 10, {KV}), 10))",
         [FeatureColumn("weighted_category", "c", {}, [
             category("category_id", "c", bucket_size=10, delimiter=",", kv_delimiter=":")])]),
        ("BUCKETIZE(DENSE(c), [1, 2])",
         [FeatureColumn("bucket", None, {"boundaries": [1, 2]},
                        [category("dense", "c", delimiter=",", shape=1)])]),
        ('*, INDICATOR(CATEGORY_ID("f1|f2", 5))',
         [FeatureColumn("auto", "*"),
          FeatureColumn("indicator", None, {}, [category("category_id", "f1|f2", bucket_size=5)])]),
    ],
)  # fmt: skip
def test_sqlflow_forms_lower_to_sqlml_features(columns, expected):
    lowered = features(columns)
    assert lowered == expected
    assert [FeatureColumn.from_dict(dataclasses.asdict(f)) for f in lowered] == expected


# COLUMN starts line 2, so the first expression is at column 8.
@pytest.mark.parametrize(
    ("columns", "column", "message"),
    [
        ('EMBEDDING("f[", 4)', 18, "f[ is not a valid column pattern"),
        ("EMBEDDING(*, 4)", 18, "* stands for every column only on its own: COLUMN *"),
        ("NUMERIC(DENSE(c, 4), 4)", 29, "NUMERIC(DENSE(...)) takes its shape from DENSE"),
        ("CATEGORY_ID(SPARSE(c, 9, ';'), 9, ';')", 42,
         "CATEGORY_ID over SPARSE(...) takes the delimiter from it"),
        ("WEIGHTED_CATEGORY(CATEGORY_ID(c, 9))", 8,
         "WEIGHTED_CATEGORY needs a weight column, or a category over key-value lists"),
        ("DENSE(c, 4, ',', text)", 25,
         "DENSE's dtype must be one of int, int32, int64, float, float32, float64, string"),
        ('SPARSE(c, 9, ",", "float", ":")', 26,
         "SPARSE's keys of key-value lists are integers: its dtype must be int"),
        ('SPARSE(c, 9, ",", "int", ":", "int")', 38, "SPARSE's weight_dtype must be float"),
        ("DENSE(c, 4, ',', string)", 25, "DENSE of strings is a category, not numbers"),
        ("EMBEDDING(c, 4, sum, xavier)", 29, "EMBEDDING's initializer must be one of"),
        ("BUCKETIZE(DENSE(c, 2), [1])", 27,
         "BUCKET takes one number per row; DENSE's shape must be 1 here"),
    ],
)  # fmt: skip
def test_errors_point_at_the_argument(columns, column, message):
    with pytest.raises(CheckError) as caught:
        features(columns)
    assert (caught.value.line, caught.value.column) == (2, column)
    assert caught.value.message.startswith(message)
    assert caught.value.hint


def rows() -> dict[str, np.ndarray]:
    return {
        "f1": np.array([0.5, 1.5, 2.5]),
        "f2": np.array([1.0, 2.0, 3.0]),
        "d": np.array(["1,2,3", "4,5,6", None], dtype=object),
        "kv": np.array(["0:0.5,3:2", "5:1", ""], dtype=object),
        "y": np.array([0, 1, 0]),
    }


def test_shapes_patterns_and_star_are_found_from_the_data():
    given = features(
        'DENSE(d), SPARSE(kv, none, ",", int, ":"), EMBEDDING(CATEGORY_ID("F.", 4), 2), *'
    )
    derived = derive(rows(), given, "y")
    assert [f.name for f in derived] == [
        "d",
        "kv",
        "EMBEDDING(f1)",
        "EMBEDDING(f2)",
    ]  # * adds nothing: every column but the label is read already
    assert derived[0].params["shape"] == 3
    assert derived[1].params["shape"] == 6
    star = derive(rows(), features("*, NUMERIC(f1)"), "y")
    assert [f.name for f in star] == ["f2", "d", "kv", "f1"]
    weighted = derive(rows(), features(f"EMBEDDING(SPARSE(kv, 6, {KV}), 2, sum)"), "y")
    (embedding,) = transform(rows(), weighted).categoricals
    np.testing.assert_array_equal(embedding.ids, [[0, 3], [5, 0], [0, 0]])
    np.testing.assert_array_equal(embedding.weights, [[0.5, 2], [1, 0], [0, 0]])


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ('NUMERIC("g.*")', "the pattern g.* matches no column of the SELECT but the label"),
        ('CROSS(["f.", "d.*"], 10)', "feature CROSS(f., d.*) holds more than one column pattern"),
        ("DENSE(kv)", "DENSE column kv holds 1 to 2 values per row"),
        ('"f.", f2', "feature f2 is listed twice: a column pattern repeats it"),
        ('DENSE(f1, 1, ",", int)',
         'DENSE column f1 holds fractions (row 1), but its dtype is "int"'),
    ],
)  # fmt: skip
def test_data_errors(columns, message):
    with pytest.raises(ModelError) as caught:
        transform(rows(), derive(rows(), features(columns), "y"))
    assert caught.value.message == message
    assert caught.value.hint


def test_check_knows_patterns():
    check_columns(rows(), features('NUMERIC("F[12]"), *'))
    with pytest.raises(ModelError, match=r"the pattern x\.\* matches no column of the result"):
        check_columns(rows(), features('NUMERIC("x.*")'))


def table(n: int, seed: int) -> dict[str, np.ndarray]:
    """Two classes, told apart by every column but f2 (noise): ids holds 7 in class 1 and 3
    in class 0, kv key 5 or key 1, d's last number is the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    dense = [[*rng.normal(2 * c - 1, 0.3, 3).round(2), c] for c in y]
    ids = [sorted({7 if c else 3, *rng.integers(0, 3, 2).tolist()}) for c in y]
    return {
        "id": np.arange(n),
        "f1": (rng.normal(0, 0.5, n) + 3 * y).round(3),
        "f2": rng.normal(0, 1, n).round(3),
        "d": np.array([",".join(map(str, v)) for v in dense], dtype=object),
        "ids": np.array([",".join(map(str, v)) for v in ids], dtype=object),
        "kv": np.array([f"{5 if c else 1}:{rng.uniform(0.5, 1):.2f},0:0.3" for c in y], object),
        "y": y,
    }


PROGRAMS = {
    "xgboost": """
        SELECT * FROM train TO TRAIN xgboost.gbtree
        WITH objective = "binary:logistic", train.num_boost_round = 10
        COLUMN SPARSE(kv, 8, ",", "int", ":", "float"), "f[12]",
               INDICATOR(CATEGORY_ID(SPARSE(ids, 10, COMMA), 10))
        LABEL y INTO m;
    """,
    "xgboost star": """
        SELECT * FROM train TO TRAIN xgboost.gbtree
        WITH objective = "binary:logistic", train.num_boost_round = 10
        COLUMN *, BUCKETIZE(f1, [0, 1.5, 3])
        LABEL y INTO m;
    """,
    "keras": """
        SELECT * FROM train TO TRAIN DNNClassifier
        WITH model.n_classes = 2, model.hidden_units = [8], train.epoch = 5
        COLUMN NUMERIC(DENSE(d, none, comma, "float")),
               EMBEDDING(CATEGORY_ID(SPARSE(ids, 10, COMMA), 10), 4, "sum"),
               EMBEDDING(SPARSE(kv, 8, ",", "int", ":", "float"), 4, sum,
                         truncated_normal_initializer),
               INDICATOR(CATEGORY_HASH(SPARSE(ids), 16)), NUMERIC("F[2]")
        LABEL y INTO m;
    """,
}
# The selected columns COLUMN leaves out are features too, as in SQLFlow (id, d; id, f1).
FEATURES = {
    "xgboost": ["kv", "f1", "f2", "INDICATOR(ids)", "id", "d"],
    "xgboost star": ["id", "f2", "d", "ids", "kv", "BUCKET(f1)"],
    "keras": ["d", "EMBEDDING(ids)", "EMBEDDING(WEIGHTED_CATEGORY(kv, kv))",
              "INDICATOR(CATEGORY_HASH(ids))", "f2", "id", "f1"],
}  # fmt: skip


@pytest.mark.parametrize("name", PROGRAMS)
def test_trained_and_predicted(name, duckdb_url):
    """Each program trains on 200 rows and predicts 40 others, at least 95% right."""
    ds = connect(duckdb_url)
    ds.write_table(["train"], table(200, 1))
    test = table(40, 2)
    ds.write_table(["test"], test)
    ds.close()
    program = PROGRAMS[name] + "SELECT * FROM test TO PREDICT predicted.y USING m;"
    assert main(["-e", program, "--datasource", duckdb_url]) == 0
    ds = connect(duckdb_url)
    result = ds.execute("SELECT * FROM predicted ORDER BY id")
    (_, _, metadata), *_ = ModelStore(ds).list()
    ds.close()
    assert result.columns == ["id", "f1", "f2", "d", "ids", "kv", "y"]
    assert [row[0] for row in result.rows] == list(range(40))
    assert [row[1:6] for row in result.rows] == [
        tuple(test[c][i] for c in ("f1", "f2", "d", "ids", "kv")) for i in range(40)
    ]
    accuracy = np.mean([row[-1] for row in result.rows] == test["y"])
    assert accuracy >= 0.95, accuracy
    assert [FeatureColumn.from_dict(f).name for f in metadata["features"]] == FEATURES[name]


@pytest.mark.parametrize(
    ("column", "features", "warned"),
    [
        # SQLFlow's "simpler COLUMN clause": the selected columns COLUMN leaves out (the
        # label aside) are derived as features too, and sqlml says which.
        ("BUCKET(f1, [0, 1.5, 3])", ["BUCKET(f1)", "id", "f2"], "id, f2, which COLUMN"),
        # COLUMN * already says where they go; every column named: nothing left out.
        ("*, BUCKET(f1, [0, 1.5, 3])", ["id", "f2", "BUCKET(f1)"], None),
        ("f2, f1, id", ["f2", "f1", "id"], None),
    ],
)
def test_columns_column_leaves_out_are_features_too(duckdb_url, capsys, column, features, warned):
    ds = connect(duckdb_url)
    ds.write_table(
        ["train"], {k: v for k, v in table(60, 1).items() if k in ("id", "f1", "f2", "y")}
    )
    ds.close()
    program = (
        "SELECT * FROM train TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        f"train.num_boost_round = 2 COLUMN {column} LABEL y INTO m;"
    )
    assert main(["-e", program, "--datasource", duckdb_url]) == 0
    err = capsys.readouterr().err
    ds = connect(duckdb_url)
    metadata = ModelStore(ds).load("m").metadata
    ds.close()
    assert [FeatureColumn.from_dict(f).name for f in metadata["features"]] == features
    if warned is None:
        assert "COLUMN leaves out" not in err
    else:
        assert f"<-e>:1:1: warning: the SELECT's {warned} leaves out, are features too" in err


def test_names_match_the_selected_columns_in_any_case(duckdb_url, capsys):
    """SQL's names are case-insensitive; DuckDB returns a column as its table spells it."""
    ds = connect(duckdb_url)
    rows = table(80, 1)
    ds.write_table(["Mixed"], {"F1": rows["f1"], "F2": rows["f2"], "Y": rows["y"]})
    ds.close()
    program = (
        "SELECT f1, f2, y FROM mixed TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        "train.num_boost_round = 5 COLUMN BUCKET(f1, [0, 1.5, 3]), f2 LABEL y INTO m;\n"
        "SELECT * FROM mixed TO PREDICT predicted.y USING m;\n"
        "SELECT * FROM mixed TO EVALUATE m LABEL y INTO evaluated;"
    )
    assert main(["-e", program, "--datasource", duckdb_url]) == 0, capsys.readouterr().err
    ds = connect(duckdb_url)
    predicted = ds.execute("SELECT * FROM predicted")
    [(accuracy,)] = ds.execute("SELECT accuracy FROM evaluated").rows
    ds.close()
    assert predicted.columns == ["f1", "f2", "y"]  # as the model names them; y predicted
    assert accuracy >= 0.9
