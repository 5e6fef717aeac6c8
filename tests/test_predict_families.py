"""PREDICT and PREDICT_PROBA of a model of every family in a query, on every database: the
rows of ``SELECT id, PREDICT(m) AS p, PREDICT_PROBA(m, 'class') AS q FROM rows`` are TO
PREDICT's table, row by row, NULL features included where the family takes them (XGBoost's
missing values, the training mean of scikit-learn's, k-means' and the one-class model's, a
node without edges). The classes are the same values of the same types. Where sqlml's own
scorer scores many rows at once (a function of sqlml's on DuckDB, the rows a query returns on
MySQL and PostgreSQL) the probabilities and values are equal exactly; a row at a time (SQLite)
or compiled into SQL (XGBoost, k-means), within 1e-6. On DuckDB and SQLite the
call also filters in a WHERE. A graph's model and a forecast score a SELECT's rows together: on
MySQL and PostgreSQL sqlml scores all the rows a query returns, as TO PREDICT does; on DuckDB
and SQLite, which call a function on a few rows at a time, the call is an error at it."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import KINDS, datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import SqlmlWarning
from sqlml.grammar import parse
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

ROWS = 200
# Of a probability, relative and absolute of a value: compiled into SQL, or scored a row at a
# time (SQLite's calls), where numpy's and TensorFlow's products of one row may round their
# last bit otherwise than over many rows (float32's, 6e-8, in a Keras network).
TOLERANCE = 1e-6
PREFIX = f"pq{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs
IN_PROCESS = ("duckdb", "sqlite")  # they call functions of sqlml's


@dataclass(frozen=True)
class Case:
    """A model of a family: its training, the rows it scores (``source``: the key and the
    features it reads), the class whose probability is asked and TO PREDICT's column of it,
    and a condition on its prediction ``{}`` that some of the rows meet."""

    name: str
    train: str
    source: str
    reads: str
    where: str
    label: str | None = None
    probability: str | None = None
    key: str = "id"
    compiles: bool = False  # into SQL: scored by the database but on DuckDB
    together: bool = False  # scores the SELECT's rows together (Family.scores_together)


CASES = [
    Case(
        "xgboost",
        "SELECT a, b, label FROM pq_rows TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 3, max_depth = 3 LABEL label",
        "pq_rows",
        "a, b",
        "{} = 'hi'",
        "hi",
        "p_hi",
        compiles=True,
    ),
    Case(
        "keras",  # a Keras network takes no NULL number (its error: test_keras_nulls...)
        "SELECT b, c, city, label FROM pq_rows TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [4], train.epoch = 1 LABEL label",
        "pq_rows",
        "b, c, city",
        "{} = 'lo'",
        "lo",
        "p_lo",
    ),
    Case(
        "forest",
        "SELECT a, b, label FROM pq_rows TO TRAIN sklearn.ensemble.RandomForestClassifier "
        "WITH model.n_estimators = 5, model.max_depth = 3 LABEL label",
        "pq_rows",
        "a, b",
        "{} = 'mid'",
        "mid",
        "p_mid",
        compiles=True,
    ),
    Case(
        "linear",
        "SELECT a, b, y FROM pq_rows TO TRAIN sklearn.linear_model.LinearRegression LABEL y",
        "pq_rows",
        "a, b",
        "{} > 0.5",
        compiles=True,
    ),
    Case(
        "kmeans",
        "SELECT a, b FROM pq_rows TO TRAIN KMeans WITH model.n_clusters = 3",
        "pq_rows",
        "a, b",
        "{} = 2",
        "2",
        "p_2",
        compiles=True,
    ),
    Case(
        "outlier",
        "SELECT a, b FROM pq_rows TO TRAIN sqlflow_models.OneClassSVM WITH model.nu = 0.2",
        "pq_rows",
        "a, b",
        "{} = -1",
        "1",
        "p_prob_1",  # the classes -1 and 1 do not name columns
    ),
    Case(
        "graph",  # a node without edges: one row whose edge columns are NULL
        "SELECT id, f1, f2, cls, from_node_id, to_node_id FROM pq_graph "
        "TO TRAIN sqlflow_models.GCN WITH model.nhid = 4, model.epochs = 5 "
        "COLUMN id, f1, f2, from_node_id, to_node_id LABEL cls",
        "pq_graph",
        "id, f1, f2, from_node_id, to_node_id",
        "{} = 'x'",
        "x",
        "p_x",
        key="rid",
        together=True,
    ),
    Case(
        "forecast",  # the future's rows are stored out of order: the query orders them
        "SELECT t, v FROM pq_series TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition "
        "WITH model.order = [2, 0, 0], model.period = [6] LABEL v",
        "pq_future",
        "t",
        "{} > 11",
        together=True,
    ),
]
NAMES = [case.name for case in CASES]


def _named(sql: str) -> str:
    """``sql`` with this run's names: each ``pq_`` (tables, models) prefixed so."""
    return sql.replace("pq_", PREFIX)


def _tables() -> dict[str, dict[str, np.ndarray]]:
    """Rows of numbers (``a`` with NULLs), a text category and three classes; a graph of two
    communities joined with its edges, one row a node and edge; a seasonal series and the
    steps after it."""
    rng = np.random.default_rng(7)
    a, b, c = rng.normal(size=ROWS), rng.uniform(-2, 2, ROWS), rng.normal(size=ROWS)
    score = a + b / 2
    rows = {
        "id": np.arange(ROWS),
        "a": np.where(rng.random(ROWS) < 0.1, np.nan, a),  # NaN is written as NULL
        "b": b,
        "c": c,
        "city": rng.choice(["paris", "oslo", "rome"], ROWS).astype(object),
        "label": np.select([score > 0.5, score < -0.5], ["hi", "lo"], "mid").astype(object),
        "y": 2 * a - b + rng.normal(scale=0.1, size=ROWS),
    }
    nodes = 40
    ends = [
        (i, j)
        for i in range(nodes)
        for j in range(i + 1, nodes - 2)  # the last two nodes have no edges
        if (i - j) % 2 == 0 and rng.random() < 0.2
    ]
    graph: dict[str, list] = {name: [] for name in ("id", "f1", "f2", "cls", "from", "to")}
    features = rng.normal(size=(nodes, 2)) + np.arange(nodes)[:, None] % 2
    for node in range(nodes):
        edges = [edge for edge in ends if node in edge] or [(np.nan, np.nan)]
        for first, second in edges:
            for name, value in zip(
                graph,
                (100 + node, *features[node], "xy"[node % 2], 100 + first, 100 + second),
                strict=True,
            ):
                graph[name].append(value)
    t = np.arange(60)
    future = np.random.default_rng(1).permutation(10)
    return {
        "rows": rows,
        "graph": {
            "rid": np.arange(len(graph["id"])),
            **{k: np.array(v) for k, v in graph.items() if k not in ("cls", "from", "to")},
            "cls": np.array(graph["cls"], dtype=object),
            "from_node_id": np.array(graph["from"], dtype=np.float64),
            "to_node_id": np.array(graph["to"], dtype=np.float64),
        },
        "series": {"t": t, "v": 5 + 0.1 * t + np.sin(t)},
        "future": {"id": future, "t": 60 + future},
    }


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", _named(program), "--datasource", url])
    assert status == 0, capsys.readouterr().err


def _failed(url: str, program: str, capsys) -> str:
    """Standard error of ``program``, which fails."""
    capsys.readouterr()
    assert main(["-e", _named(program), "--datasource", url]) != 0
    return capsys.readouterr().err


def _query(url: str, sql: str) -> list[tuple]:
    """The rows of ``sql``, run by sqlml's handler (its calls replaced), as they come."""
    ds = connect(url)
    try:
        (statement,) = analyze(parse(_named(sql)), ds.dialect)
        result = execute(statement, ds).result
        assert result is not None
        return [tuple(row) for row in result.rows]
    finally:
        ds.close()


def _fetch(url: str, sql: str) -> list[tuple]:
    """The rows of plain ``sql`` (no calls)."""
    ds = connect(url)
    try:
        result = ds.execute(_named(sql))
        assert result is not None
        return [tuple(row) for row in result.rows]
    finally:
        ds.close()


@pytest.fixture(params=KINDS, scope="module")
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A database of each kind holding the tables, a model of each case (``pq_<case>``)
    and TO PREDICT's table of it (``pq_p_<case>``, the prediction ``p``)."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    for table, columns in _tables().items():
        ds.write_table([f"{PREFIX}{table}"], columns, replace=True)
    ds.close()
    program = []
    for case in CASES:
        extra = ", predict.extra_outputs = 'probabilities'" if case.label else ""
        program += [
            f"{case.train} INTO pq_{case.name};",
            f"SELECT {case.key}, {case.reads} FROM {case.source} ORDER BY {case.key} "
            f"TO PREDICT pq_p_{case.name}.p WITH output.replace = true{extra} "
            f"USING pq_{case.name};",
        ]
    assert main(["-e", _named("\n".join(program)), "--datasource", url]) == 0
    yield url
    models = " ".join(f"DROP MODEL IF EXISTS pq_{case.name};" for case in CASES)
    main(["-e", _named(models), "--datasource", url])
    ds = connect(url)
    try:
        for table in [*_tables(), *(f"p_{case.name}" for case in CASES)]:
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    finally:
        ds.close()


def _kind(url: str) -> str:
    return url.split(":", 1)[0]


def _tolerance(kind: str, case: Case) -> float:
    """How far a probability or value may be from TO PREDICT's: 0 where sqlml's own scorer
    scores the rows at once, as TO PREDICT does (DuckDB's vector of these few rows, the rows
    MySQL and PostgreSQL return)."""
    return TOLERANCE if kind == "sqlite" or (case.compiles and kind != "duckdb") else 0.0


def _equal(found: list, expected: list, tolerance: float) -> None:
    if tolerance == 0:
        assert found == expected
    else:
        np.testing.assert_allclose(
            np.array(found, dtype=np.float64),
            np.array(expected, dtype=np.float64),
            rtol=tolerance,
            atol=tolerance,
        )


ESTIMATORS = {"graph": "sqlflow_models.GCN", "forecast": "sqlflow_models.ARIMAWithSTLDecomposition"}


def _assert_scored_together(err: str, case: Case, at: str) -> None:
    """``err`` holds the error of a call, at ``at``, of a model that scores rows together."""
    model = f"{PREFIX}{case.name} ({ESTIMATORS[case.name]})"
    assert f"<-e>:{at}: error: model {model} scores the rows of its SELECT together" in err, err
    assert "the database calls sqlml's function on a few of the query's rows at a time" in err
    assert "hint: score the rows into a table with TO PREDICT, then query the table" in err


@pytest.mark.parametrize("name", NAMES)
def test_predict_equals_to_predict(trained: str, name: str, capsys):
    """The query's rows are TO PREDICT's; a model that scores rows together, called on
    DuckDB or SQLite, is an error at the call."""
    case = CASES[NAMES.index(name)]
    url, kind = trained, _kind(trained)
    model = f"pq_{name}"
    probability = f", PREDICT_PROBA({model}, '{case.label}') AS q" if case.label else ""
    query = (
        f"SELECT {case.key},\n  PREDICT({model}) AS p{probability} FROM {case.source} "
        f"ORDER BY {case.key}"
    )
    if case.together and kind in IN_PROCESS:
        _assert_scored_together(_failed(url, f"{query};", capsys), case, "2:3")
        return
    started = time.monotonic()
    found = _query(url, query)
    if kind == "sqlite" and name == "keras":  # 2 x 200 calls of a row: 3 s; 80 s by predict()
        assert time.monotonic() - started < 30
    columns = ", ".join([case.key, "p", *([case.probability] if case.label else [])])
    expected = _fetch(url, f"SELECT {columns} FROM pq_p_{name} ORDER BY {case.key}")
    assert len(found) == len(expected) > 0
    assert [row[0] for row in found] == [row[0] for row in expected]
    tolerance = _tolerance(kind, case)
    if case.label:  # a class: the same value, of the same type
        assert [(row[1], type(row[1])) for row in found] == [
            (row[1], type(row[1])) for row in expected
        ]
        assert len({row[1] for row in found}) > 1
        _equal([row[2] for row in found], [row[2] for row in expected], tolerance)
    else:
        _equal([row[1] for row in found], [row[1] for row in expected], tolerance)
    err = capsys.readouterr().err
    scored_here = kind not in IN_PROCESS and not case.compiles
    assert ("sqlml scores the rows the query returns itself" in err) == scored_here, err


@pytest.mark.parametrize("name", NAMES)
def test_predict_in_a_where_selects_what_to_predict_predicted(trained: str, name: str, capsys):
    """In a WHERE, the call filters the rows as TO PREDICT's predictions do, where a
    function of sqlml's (DuckDB, SQLite) or the model's SQL scores them; elsewhere, and for a
    model that scores rows together on DuckDB or SQLite, the call is an error at it."""
    case = CASES[NAMES.index(name)]
    url, kind = trained, _kind(trained)
    condition = case.where.format(f"PREDICT(pq_{name})")
    query = f"SELECT {case.key} FROM {case.source}\nWHERE {condition} ORDER BY {case.key}"
    if case.together and kind in IN_PROCESS:
        _assert_scored_together(_failed(url, f"{query};", capsys), case, "2:7")
    elif kind not in IN_PROCESS and not case.compiles:
        err = _failed(url, f"{query};", capsys)
        assert f"<-e>:2:7: error: model {PREFIX}{name} " in err, err
        assert "cannot be compiled into SQL" in err
    else:
        found = _query(url, query)
        expected = _fetch(
            url, f"SELECT {case.key} FROM pq_p_{name} WHERE {case.where.format('p')} ORDER BY 1"
        )
        assert found == expected
        assert 0 < len(found) < len(_fetch(url, f"SELECT 1 FROM {case.source}"))


def test_check_finds_what_the_run_does(trained: str):
    """``sqlml check --datasource``: a model that scores rows together, called on DuckDB or
    SQLite, is an error at the call; on MySQL and PostgreSQL, as an item of the outermost
    SELECT list, it is scored by sqlml, a warning, like any model that does not compile."""
    url, kind = trained, _kind(trained)
    program = _named(
        "SELECT rid, PREDICT(pq_graph) AS p FROM pq_graph;\n"
        "SELECT id, PREDICT(pq_forecast) AS p FROM pq_future;\n"
        "SELECT id, PREDICT(pq_keras) AS p FROM pq_rows;"
    )
    ds = connect(url)
    try:
        found = check_program(program, ds.dialect, datasource=ds)
    finally:
        ds.close()
    errors = errors_of(found)
    warnings = [e for e in found if isinstance(e, SqlmlWarning)]
    if kind in IN_PROCESS:
        assert [(e.line, e.column) for e in errors] == [(1, 13), (2, 12)]
        assert all("scores the rows of its SELECT together" in e.message for e in errors)
        assert warnings == []
    else:
        assert errors == []
        assert [(w.line, w.column) for w in warnings] == [(1, 13), (2, 12), (3, 12)]
        assert all("sqlml scores the rows the query returns itself" in w.message for w in warnings)


def test_keras_nulls_are_its_error_at_the_call(trained: str, capsys):
    """A Keras network takes no NULL number: the query fails as TO PREDICT does."""
    url = trained
    select = "SELECT id, a AS b, c, city FROM pq_rows"
    err = _failed(url, f"{select} TO PREDICT pq_nulls.p USING pq_keras;", capsys)
    assert "the features hold NULL values, which a neural network cannot take" in err, err
    err = _failed(url, f"SELECT id, PREDICT(pq_keras) AS p FROM ({select}) AS s;", capsys)
    assert "the features hold NULL values, which a neural network cannot take" in err, err
    assert "hint: filter them out or replace them with COALESCE in the SELECT" in err
