"""PREDICT(m) and PREDICT_PROBA(m, 'class') inside standard SQL: each call replaced by the
model's compiled SQL before the statement runs, so the database scores the rows itself, in
any position of a query and inside a view that outlives sqlml; equal to TO PREDICT, row by
row, on every database."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import KINDS, assert_close, datasource_url, fetch_rows
from db_clients import client_or_skip, client_rows

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import Datasource, connect
from sqlml.runtime.context import Context
from sqlml.statements.sql.handler import run
from sqlml.statements.sql.ir import SqlStatement

ROWS = 200
PREFIX = f"pf{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs


def _named(sql: str) -> str:
    """``sql`` with this run's names: each ``pf_`` (tables, views, models) prefixed so."""
    return sql.replace("pf_", PREFIX)


def rows() -> dict[str, np.ndarray]:
    """Numbers with NULLs (a), fractions (b), integers (n); a text class and a value."""
    rng = np.random.default_rng(11)
    a, b, n = rng.normal(size=ROWS), rng.uniform(-2, 2, ROWS), rng.integers(0, 10, ROWS)
    nulls = rng.random(ROWS) < 0.15
    seen = np.where(nulls, 0.0, a)
    return {
        "id": np.arange(ROWS),
        "a": np.where(nulls, np.nan, a),  # NaN is written as NULL
        "b": b,
        "n": n,
        "churn": np.where(seen * b + n / 10 > 0.4, "yes", "no").astype(object),
        "y": 2 * seen - b + 0.3 * n + rng.normal(scale=0.1, size=ROWS),
    }


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", _named(program), "--datasource", url])
    assert status == 0, capsys.readouterr().err


def _fetch(ds: Datasource, query: str) -> list[tuple]:
    result = ds.execute(_named(query))
    assert result is not None
    return [tuple(row) for row in result.rows]


def _query(url: str, program: str, capsys) -> list[tuple]:
    """The rows of a program's last query, run by sqlml (its PREDICT calls compiled): the
    query's result written to a table by CREATE TABLE ... AS, then read plainly."""
    _run(url, program, capsys)
    ds = connect(url)
    try:
        return _fetch(ds, "SELECT * FROM pf_result ORDER BY 1")
    finally:
        ds.execute(_named("DROP TABLE pf_result"))
        ds.close()


@pytest.fixture(params=KINDS, scope="module")
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A datasource of each kind holding the rows (``pf_rows``), a binary classifier of text
    labels (``pf_c``) and a regressor (``pf_r``), and TO PREDICT's tables of both."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], rows(), replace=True)
    ds.close()
    assert (
        main(
            [
                "-e",
                _named(
                    "SELECT a, b, n, churn FROM pf_rows TO TRAIN xgboost.gbtree WITH "
                    "train.num_boost_round = 4, objective = 'binary:logistic', max_depth = 3 "
                    "LABEL churn INTO pf_c;\n"
                    "SELECT a, b, n, y FROM pf_rows TO TRAIN xgboost.gbtree WITH "
                    "train.num_boost_round = 4, max_depth = 3 LABEL y INTO pf_r;\n"
                    "SELECT id, a, b, n FROM pf_rows TO PREDICT pf_cp.churn "
                    "WITH predict.extra_outputs = 'probabilities', output.replace = true "
                    "USING pf_c;\n"
                    "SELECT id, a, b, n FROM pf_rows TO PREDICT pf_rp.y "
                    "WITH output.replace = true USING pf_r;"
                ),
                "--datasource",
                url,
            ]
        )
        == 0
    )
    yield url
    ds = connect(url)
    try:
        ds.execute(_named("DROP VIEW IF EXISTS pf_view"))
        for table in ("rows", "cp", "rp", "result", "extra"):
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    finally:
        ds.close()
    main(
        ["-e", _named("DROP MODEL IF EXISTS pf_c; DROP MODEL IF EXISTS pf_r;"), "--datasource", url]
    )


def test_classes_and_values_equal_to_predict(trained, capsys):
    url = trained
    found = _query(
        url,
        "CREATE TABLE pf_result AS SELECT id, PREDICT(pf_c) AS churn, PREDICT(pf_r VERSION 1) "
        "AS y FROM pf_rows;",
        capsys,
    )
    classes = fetch_rows(url, _named("SELECT id, churn FROM pf_cp ORDER BY id"))
    values = fetch_rows(url, _named("SELECT id, y FROM pf_rp ORDER BY id"))
    assert [(i, c) for i, c, _ in found] == classes
    assert {c for _, c in classes} == {"yes", "no"}
    assert [row[0] for row in found] == [row[0] for row in values]
    assert_close([row[2] for row in found], [row[1] for row in values])


def test_probability_equals_to_predict(trained, capsys):
    url = trained
    found = _query(
        url,
        "CREATE TABLE pf_result AS SELECT id, PREDICT_PROBA(pf_c, 'yes') AS p, "
        "predict_proba(pf_c, 'no') AS q FROM pf_rows;",
        capsys,
    )
    expected = fetch_rows(url, _named("SELECT id, churn_yes, churn_no FROM pf_cp ORDER BY id"))
    assert [row[0] for row in found] == [row[0] for row in expected]
    assert_close([row[1:] for row in found], [row[1:] for row in expected])


def test_where_order_by_group_by(trained, capsys):
    url = trained
    found = _query(
        url,
        "CREATE TABLE pf_result AS SELECT id FROM pf_rows "
        "WHERE PREDICT(pf_c) = 'yes' AND PREDICT_PROBA(pf_c, 'yes') > 0.5 "
        "ORDER BY PREDICT(pf_r), id LIMIT 1000;",
        capsys,
    )
    expected = fetch_rows(
        url,
        _named(
            "SELECT pf_cp.id FROM pf_cp JOIN pf_rp ON pf_cp.id = pf_rp.id "
            "WHERE churn = 'yes' ORDER BY pf_cp.id"
        ),
    )
    assert found == expected
    counted = _query(
        url,
        "CREATE TABLE pf_result AS SELECT PREDICT(pf_c) AS c, COUNT(*) AS k FROM pf_rows "
        "GROUP BY PREDICT(pf_c);",
        capsys,
    )
    want = fetch_rows(url, _named("SELECT churn, COUNT(*) FROM pf_cp GROUP BY churn ORDER BY 1"))
    assert [(c, int(k)) for c, k in counted] == [(c, int(k)) for c, k in want]


def test_cte_subquery_and_join(trained, capsys):
    """The features are read by name from the rows in scope (only the scored table may hold
    them in a JOIN)."""
    url = trained
    found = _query(
        url,
        "CREATE TABLE pf_result AS WITH scored AS (SELECT id, PREDICT(pf_c) AS c FROM pf_rows) "
        "SELECT s.id, s.c FROM scored AS s JOIN pf_cp AS p "
        "ON p.id = s.id AND p.churn = s.c "
        "WHERE s.id IN (SELECT id FROM pf_rows WHERE PREDICT(pf_r) > -100);",
        capsys,
    )
    assert found == fetch_rows(url, _named("SELECT id, churn FROM pf_cp ORDER BY id"))
    joined = _query(
        url,
        "CREATE TABLE pf_result AS SELECT p.id FROM (SELECT id, churn FROM pf_cp) AS p "
        "JOIN pf_rows AS r ON r.id = p.id AND PREDICT(pf_c) <> p.churn;",
        capsys,
    )
    assert joined == []


def test_insert_select(trained, capsys):
    url = trained
    _run(
        url,
        "CREATE TABLE pf_extra (id INTEGER, c VARCHAR(10));\n"
        "INSERT INTO pf_extra SELECT id, PREDICT(pf_c) FROM pf_rows;",
        capsys,
    )
    found = fetch_rows(url, _named("SELECT id, c FROM pf_extra ORDER BY id"))
    _run(url, "DROP TABLE pf_extra;", capsys)
    assert found == fetch_rows(url, _named("SELECT id, churn FROM pf_cp ORDER BY id"))


def test_view_outlives_sqlml(trained, capsys):
    """The view holds the compiled SQL: the database's own connection, without sqlml's
    rewriting, reads it (the mysql and psql commands on the servers)."""
    url = trained
    _run(
        url,
        "CREATE VIEW pf_view AS SELECT id, PREDICT(pf_c) AS p, PREDICT_PROBA(pf_c, 'yes') AS q "
        "FROM pf_rows;",
        capsys,
    )
    found = [
        (int(i), p, float(q))
        for i, p, q in _plain_rows(url, "SELECT id, p, q FROM pf_view ORDER BY id")
    ]
    expected = fetch_rows(url, _named("SELECT id, churn, churn_yes FROM pf_cp ORDER BY id"))
    assert [row[:2] for row in found] == [row[:2] for row in expected]
    assert_close([row[2] for row in found], [row[2] for row in expected])


def _plain_rows(url: str, query: str) -> list[tuple]:
    """``query``'s rows read without sqlml: by DuckDB's module, SQLite's in another process,
    the servers' command-line clients (their values as text)."""
    query = _named(query)
    if url.startswith("duckdb"):
        import duckdb

        with duckdb.connect(url.split(":///", 1)[1]) as connection:
            return [tuple(row) for row in connection.execute(query).fetchall()]
    if url.startswith("sqlite"):  # in a process of its own, as another program reads it
        script = (
            "import json, sqlite3, sys\n"
            "connection = sqlite3.connect(sys.argv[1])\n"
            "print(json.dumps(connection.execute(sys.argv[2]).fetchall()))\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", script, url.split(":///", 1)[1], query],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return [tuple(row) for row in json.loads(result.stdout)]
    client_or_skip("mysql" if url.startswith("mysql") else "postgresql")
    return client_rows(url, query)


def test_check_names_an_unknown_model_at_its_call(tmp_path: Path, capsys):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.write_table(["pf_rows"], rows(), replace=True)
    found = errors_of(
        check_program(
            "SELECT 1;\nSELECT id,\n  PREDICT(nowhere) FROM pf_rows;", ds.dialect, datasource=ds
        )
    )
    ds.close()
    assert [(e.line, e.column) for e in found] == [(3, 3)]
    assert "model nowhere does not exist" in found[0].message


def test_check_knows_a_model_trained_earlier(tmp_path: Path):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.write_table(["pf_rows"], rows(), replace=True)
    found = errors_of(
        check_program(
            "SELECT a, b, y FROM pf_rows TO TRAIN xgboost.gbtree LABEL y INTO later;\n"
            "CREATE VIEW v AS SELECT PREDICT(later) AS p FROM pf_rows;",
            ds.dialect,
            datasource=ds,
        )
    )
    ds.close()
    assert found == []


def test_malformed_call_is_an_error_at_it():
    found = errors_of(check_program("SELECT id, PREDICT_PROBA(m) FROM t;", "duckdb"))
    assert [(e.line, e.column) for e in found] == [(1, 27)]
    assert "PREDICT_PROBA takes a model's name and a class" in found[0].message


def test_extended_statements_select_holds_no_call():
    program = "SELECT a,\n PREDICT(m) AS p, y FROM t TO TRAIN xgboost.gbtree LABEL y INTO n;"
    found = errors_of(check_program(program, "postgres"))
    assert [(e.line, e.column) for e in found] == [(2, 2)]
    assert found[0].message == "PREDICT is for standard SQL, not the SELECT before TO TRAIN"


def test_update_sets_a_prediction(tmp_path: Path, capsys):
    url = datasource_url("sqlite", tmp_path)
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], rows(), replace=True)
    ds.close()
    program = (
        "SELECT a, b, n, y FROM pf_rows TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 "
        "LABEL y INTO pf_m;\n"
        "SELECT id, a, b, n FROM pf_rows TO PREDICT pf_p.y USING pf_m;\n"
        "ALTER TABLE pf_rows ADD COLUMN p DOUBLE;\n"
        "UPDATE pf_rows SET p = PREDICT(pf_m) WHERE id < 50;"
    )
    _run(url, program, capsys)
    ds = connect(url)
    try:
        found = _fetch(ds, "SELECT id, p FROM pf_rows WHERE p IS NOT NULL ORDER BY id")
        expected = _fetch(ds, "SELECT id, y FROM pf_p WHERE id < 50 ORDER BY id")
    finally:
        ds.close()
    assert [row[0] for row in found] == [row[0] for row in expected] == list(range(50))
    assert_close([row[1] for row in found], [row[1] for row in expected])


def test_run_errors_at_the_call(tmp_path: Path, capsys):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], rows(), replace=True)
    ds.close()
    _run(
        url,
        "SELECT a, b, churn FROM pf_rows TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 2, objective = 'binary:hinge' LABEL churn INTO hinge;\n"
        "SELECT a, n, y FROM pf_rows TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 "
        "COLUMN a, CATEGORY_HASH(n, 10) LABEL y INTO cat;",
        capsys,
    )
    cases = {
        "SELECT\n  PREDICT(missing) FROM pf_rows;": (
            ":2:3: error: model missing",
            "does not exist",
        ),
        # DuckDB scores a query's calls in sqlml's process, a view's as compiled SQL
        "CREATE VIEW cat_v AS SELECT id, PREDICT(cat) AS p FROM pf_rows;": (
            ":1:33: error: model cat cannot be compiled into SQL: its feature column "
            "CATEGORY_HASH(n) hashes its categories",
            "a view (or macro) runs after sqlml's process has ended",
        ),
        "CREATE VIEW hinge_v AS SELECT PREDICT_PROBA(hinge, 'yes') AS p FROM pf_rows;": (
            ":1:31: error: model hinge gives no probability of the class 'yes'",
            "use PREDICT",
        ),
        "SELECT PREDICT_PROBA(cat, 'yes') FROM pf_rows;": (
            ":1:8: error: model cat gives no probability of the class 'yes'",
            "it predicts values",
        ),
    }
    for program, (message, more) in cases.items():
        assert main(["-e", _named(program), "--datasource", url]) != 0
        err = capsys.readouterr().err
        assert message in err and more in err, err
    ds = connect(url)
    try:
        found = errors_of(
            check_program(
                _named(
                    "CREATE VIEW v AS SELECT PREDICT(cat) AS p FROM pf_rows;\n"
                    "SELECT 1 + PREDICT(pf_r) FROM pf_rows;\n"
                    "CREATE TABLE pf_other AS SELECT id, b FROM pf_rows;\n"
                    "SELECT id, PREDICT(hinge) FROM pf_other;\n"
                    "SELECT id, PREDICT(hinge) FROM pf_rows;"
                ),
                ds.dialect,
                datasource=ds,
            )
        )
    finally:
        ds.close()
    # the features out of scope: the database's error
    assert [(e.line, e.column) for e in found] == [(1, 25), (2, 12), (4, 1)]
    assert "model cat cannot be compiled into SQL" in found[0].message
    assert "does not exist" in found[1].message
    assert '"a"' in found[2].message


def test_a_call_waits_for_the_training_of_its_model():
    from sqlml.grammar import parse
    from sqlml.plan import dependencies
    from sqlml.semantics.analyze import lower, numbered

    program = parse(
        "SELECT a, y FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;\n"
        "CREATE VIEW v AS SELECT id, PREDICT(m VERSION 1) AS p FROM t;"
    )
    statements = [lower(node, prefix, "duckdb") for node, prefix in numbered(program)]
    assert statements[1].models == ["m"]
    graph = dependencies(statements, "duckdb")
    assert graph.after[statements[1].id] == (statements[0].id,)


def test_a_notebook_variable_beside_a_call(trained):
    """The magic's ``:name`` placeholders are bound after the calls are compiled."""
    from sqlml.repl.variables import bind
    from sqlml.runtime.context import Context
    from sqlml.statements.sql.handler import run

    url = trained
    ds = connect(url)
    try:
        (statement,) = bind(
            _named("SELECT id FROM pf_rows WHERE PREDICT_PROBA(pf_c, 'yes') > :p ORDER BY id;"),
            {"p": 0.5},
            ds.dialect,
        )
        assert statement.models == [f"{PREFIX}c"] and statement.params == {"p": 0.5}
        result = run(statement, Context(ds)).result
        assert result is not None
        found = [tuple(row) for row in result.rows]
        assert found == _fetch(ds, "SELECT id FROM pf_cp WHERE churn_yes > 0.5 ORDER BY id")
    finally:
        ds.close()


def test_kmeans_cluster_and_soft_assignment(trained, capsys):
    """Trained on rows without NULLs, scored on all: a NULL feature is the training rows'
    mean, in TO PREDICT's batches as in the SQL."""
    url = trained
    _run(
        url,
        "SELECT a, b, n FROM pf_rows WHERE a IS NOT NULL TO TRAIN KMeans "
        "WITH model.n_clusters = 3 INTO pf_k;\n"
        "SELECT id, a, b, n FROM pf_rows TO PREDICT pf_kp.cluster "
        "WITH predict.extra_outputs = 'probabilities', output.replace = true USING pf_k;",
        capsys,
    )
    try:
        found = _query(
            url,
            "CREATE TABLE pf_result AS SELECT id, PREDICT(pf_k) AS c, PREDICT_PROBA(pf_k, '2') "
            "AS p FROM pf_rows;",
            capsys,
        )
        expected = fetch_rows(url, _named("SELECT id, cluster, cluster_2 FROM pf_kp ORDER BY id"))
        assert [(i, int(c)) for i, c, _ in found] == [(i, int(c)) for i, c, _ in expected]
        assert_close([row[2] for row in found], [row[2] for row in expected])
    finally:
        _run(url, "DROP TABLE IF EXISTS pf_kp;\nDROP MODEL IF EXISTS pf_k;", capsys)


def test_postgresql_runs_compiled_models_without_jit(trained, capsys):
    """PostgreSQL would compile a model's SQL with LLVM for longer than it runs: the
    statement runs with jit off, and the session's setting is back afterwards."""
    if not trained.startswith("postgresql"):
        return
    ds = connect(trained)
    try:
        before = _fetch(ds, "SELECT current_setting('jit')")
    finally:
        ds.close()
    found = _query(
        trained,
        "CREATE TABLE pf_result AS SELECT current_setting('jit') AS jit, PREDICT(pf_c) AS c "
        "FROM pf_rows LIMIT 1;",
        capsys,
    )
    assert [row[0] for row in found] == ["off"]
    ds = connect(trained)
    try:
        ds.execute("SELECT set_config('jit', 'on', false)")
        text = _named("CREATE TABLE pf_extra AS SELECT PREDICT(pf_c) AS c FROM pf_rows")
        statement = SqlStatement("s1", text, 1, 1, models=[f"{PREFIX}c"])
        run(statement, Context(ds))  # as a step runs it, on the session's connection
        assert before and _fetch(ds, "SELECT current_setting('jit')") == [("on",)]
    finally:
        ds.close()
