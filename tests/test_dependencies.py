"""Dependency analysis: what each statement reads and writes, and the program's DAG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sqlml import ir
from sqlml.cli import main
from sqlml.grammar import parse
from sqlml.plan import StatementIO, dependencies
from sqlml.semantics import analyze

ROOT = Path(__file__).resolve().parent.parent

# (dialect, standard SQL, tables read, tables written)
TABLES = [
    # Queries read every table they name...
    ("duckdb", "SELECT * FROM a JOIN db.B ON a.id = b.id LEFT JOIN c USING (id)", "a db.b c", ""),
    ("duckdb", "SELECT * FROM (SELECT * FROM a) s WHERE EXISTS (SELECT 1 FROM b)", "a b", ""),
    ("duckdb", "SELECT * FROM a WHERE x IN (SELECT x FROM b) UNION SELECT * FROM c", "a b c", ""),
    ("mysql", "SELECT * FROM `Db`.`T`", "db.t", ""),
    ("duckdb", "DESCRIBE t", "t", ""),
    # ...but not common table expressions in scope...
    ("duckdb", "WITH a AS (SELECT * FROM t), b AS (SELECT * FROM a) SELECT * FROM b", "t", ""),
    ("duckdb", "WITH t AS (SELECT * FROM t) SELECT * FROM t", "t", ""),
    (
        "duckdb",
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n FROM r) SELECT * FROM r",
        "",
        "",
    ),
    ("duckdb", "SELECT * FROM t WHERE x IN (WITH t AS (SELECT 1 AS x) SELECT x FROM t)", "t", ""),
    ("duckdb", "WITH a AS (SELECT 1) SELECT * FROM main.a", "main.a", ""),
    # ...nor table functions.
    ("duckdb", "SELECT * FROM read_csv('x.csv'), range(3) r(i)", "", ""),
    # Statements that write: their targets are written, the other tables read.
    ("duckdb", "CREATE OR REPLACE TABLE Main.T AS SELECT * FROM u", "u", "main.t"),
    ("duckdb", "CREATE TABLE t (a INT REFERENCES o (id))", "o", "t"),
    ("duckdb", "CREATE VIEW v AS SELECT * FROM t", "t", "v"),
    ("duckdb", "CREATE INDEX i ON t (a)", "", "t"),
    ("duckdb", "INSERT INTO t (a) SELECT a FROM u JOIN v USING (id)", "u v", "t"),
    ("duckdb", "WITH w AS (SELECT * FROM u) INSERT INTO t SELECT * FROM w", "u", "t"),
    ("duckdb", "INSERT INTO t SELECT * FROM t", "t", "t"),
    ("postgres", "SELECT * INTO n FROM t", "t", "n"),
    ("postgres", "UPDATE t SET a = s.a FROM s WHERE t.id = s.id", "s", "t"),
    ("mysql", "UPDATE t JOIN s ON t.id = s.id SET t.a = s.a", "", "s t"),  # either may change
    ("duckdb", "DELETE FROM t WHERE id IN (SELECT id FROM u)", "u", "t"),
    ("mysql", "DELETE t FROM t JOIN s ON t.id = s.id", "s t", "t"),
    ("duckdb", "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET b = s.b", "s", "t"),
    ("duckdb", "DROP TABLE IF EXISTS a, b", "", "a b"),
    ("duckdb", "DROP VIEW v", "", "v"),
    ("duckdb", "TRUNCATE a", "", "a"),
    ("duckdb", "ALTER TABLE a RENAME TO b", "", "a b"),
    ("postgres", "ALTER TABLE a ADD COLUMN c INT", "", "a"),
]

# Standard SQL that is not plain table reads and writes, or that sqlglot cannot parse.
BARRIERS = [
    ("duckdb", "SET threads = 4"),
    ("duckdb", "USE other"),
    ("duckdb", "CREATE MACRO f(a) AS a + 1"),
    ("duckdb", "COPY t TO 'x.csv'"),
    ("duckdb", "DROP INDEX i"),
    ("duckdb", "BEGIN"),
    ("mysql", "RENAME TABLE a TO b"),
    ("duckdb", "FROBNICATE the database"),
    ("duckdb", "INSERT INTO"),
]


def sql(text: str) -> ir.SqlStatement:
    return ir.SqlStatement(id="s1", text=text, line=1, column=1)


def io_of(text: str, dialect: str = "duckdb") -> StatementIO:
    return dependencies([sql(text)], dialect).io["s1"]


@pytest.mark.parametrize(("dialect", "text", "reads", "writes"), TABLES)
def test_tables_read_and_written(dialect, text, reads, writes):
    io = io_of(text, dialect)
    assert (io.reads_tables, io.writes_tables) == (set(reads.split()), set(writes.split()))
    assert not io.barrier


@pytest.mark.parametrize(("dialect", "text"), BARRIERS)
def test_statements_not_understood_are_barriers(dialect, text):
    assert io_of(text, dialect) == StatementIO(barrier=True)


# (extended statement, its IO)
MODELS = [
    (
        "SELECT * FROM d JOIN e USING (id) TO TRAIN xgboost.gbtree LABEL y INTO Db.M",
        StatementIO(reads_tables=frozenset({"d", "e"}), writes_models=frozenset({"Db.M"})),
    ),
    (
        "SELECT * FROM d TO PREDICT out.p.y USING m",
        StatementIO(
            reads_tables=frozenset({"d"}),
            writes_tables=frozenset({"out.p"}),
            reads_models=frozenset({"m"}),
        ),
    ),
    (
        "SELECT * FROM d TO EVALUATE m LABEL y INTO ev",
        StatementIO(
            reads_tables=frozenset({"d"}),
            writes_tables=frozenset({"ev"}),
            reads_models=frozenset({"m"}),
        ),
    ),
    (
        "SELECT * FROM d TO EXPLAIN m",
        StatementIO(reads_tables=frozenset({"d"}), reads_models=frozenset({"m"})),
    ),
    (
        "SELECT * FROM d TO EXPLAIN m INTO ex",
        StatementIO(
            reads_tables=frozenset({"d"}),
            writes_tables=frozenset({"ex"}),
            reads_models=frozenset({"m"}),
        ),
    ),
    (
        "SELECT * FROM d TO EXPLAIN m WITH summary.plot_type = bar",
        StatementIO(
            reads_tables=frozenset({"d"}),
            reads_models=frozenset({"m"}),
            writes_files=frozenset({"m_explain.png"}),
        ),
    ),
    (
        "SELECT * FROM d TO EVALUATE m WITH evaluate.plot = 'out/./ev.png' LABEL y INTO ev",
        StatementIO(
            reads_tables=frozenset({"d"}),
            writes_tables=frozenset({"ev"}),
            reads_models=frozenset({"m"}),
            writes_files=frozenset({"out/ev.png"}),
        ),
    ),
    (
        "SELECT * FROM d TO RUN pkg.mod.f INTO a, b, c, e, f, g, h, i, j",
        StatementIO(reads_tables=frozenset({"d"}), writes_tables=frozenset("abcefghij")),
    ),
    ("SHOW TRAIN m", StatementIO(reads_models=frozenset({"m"}))),
    ("DESCRIBE MODEL m", StatementIO(reads_models=frozenset({"m"}))),
    ("DROP MODEL IF EXISTS m", StatementIO(writes_models=frozenset({"m"}))),
    ("SHOW MODELS", StatementIO(reads_all_models=True)),
]


@pytest.mark.parametrize(("text", "io"), MODELS)
def test_extended_statements_read_and_write_models(text, io):
    [statement] = analyze(parse(text + ";"))
    assert dependencies([statement], "duckdb").io[statement.id] == io


def edges(program: str) -> dict[int, list[int]]:
    """The DAG of ``program`` by statement number (from 1): what each runs after."""
    statements = analyze(parse(program))
    number = {statement.id: n for n, statement in enumerate(statements, 1)}
    after = dependencies(statements, "duckdb").after
    return {number[s.id]: [number[dep] for dep in after[s.id]] for s in statements}


TRAIN = "SELECT * FROM d TO TRAIN xgboost.gbtree LABEL y INTO {};"

# (what it shows, program, what each statement runs after)
DAGS = [
    (
        "train, predict, then query the predictions",
        f"""CREATE TABLE d AS SELECT 1 AS x, 0 AS y;
            {TRAIN.format("m")}
            SELECT * FROM d TO PREDICT p.y USING m;
            SELECT * FROM p;""",
        {1: [], 2: [1], 3: [2], 4: [3]},  # 3 reads d too: implied through 2
    ),
    (
        "independent trainings run in parallel",
        f"CREATE TABLE d AS SELECT 1 AS x, 0 AS y; {TRAIN.format('m1')} {TRAIN.format('m2')}",
        {1: [], 2: [1], 3: [1]},
    ),
    (
        "edges implied by others are left out",
        """CREATE TABLE a AS SELECT 1 AS x;
           CREATE TABLE b AS SELECT * FROM a;
           SELECT * FROM a JOIN b USING (x);""",
        {1: [], 2: [1], 3: [2]},
    ),
    (
        "write after read and write after write",
        """SELECT * FROM t; SELECT * FROM t;
           DROP TABLE t;
           CREATE TABLE t AS SELECT 2 AS x;
           INSERT INTO t VALUES (3);""",
        {1: [], 2: [], 3: [1, 2], 4: [3], 5: [4]},
    ),
    (
        "names compare by their last part, case-insensitively",
        "CREATE TABLE main.t AS SELECT 1 AS x; SELECT * FROM T; SELECT * FROM u;",
        {1: [], 2: [1], 3: []},
    ),
    (
        "reading a view reads the tables behind it",
        """CREATE VIEW v AS SELECT * FROM t;
           CREATE VIEW w AS SELECT * FROM v;
           SELECT * FROM w;
           INSERT INTO t VALUES (1);""",
        {1: [], 2: [1], 3: [2], 4: [3]},
    ),
    (
        "a renamed view still reads the tables behind it",
        """CREATE VIEW v AS SELECT * FROM t;
           ALTER VIEW v RENAME TO w;
           SELECT * FROM w;
           INSERT INTO t VALUES (1);""",
        {1: [], 2: [1], 3: [2], 4: [3]},
    ),
    (
        "a barrier runs after everything before it and before everything after it",
        """CREATE TABLE a AS SELECT 1 AS x;
           CREATE TABLE b AS SELECT 1 AS x;
           SET threads = 1;
           SELECT * FROM a;
           CREATE TABLE c AS SELECT 1 AS x;
           SELECT * FROM c;""",
        {1: [], 2: [], 3: [1, 2], 4: [3], 5: [3], 6: [5]},
    ),
    (
        "a statement sqlglot cannot parse is a barrier",
        "SELECT * FROM a; SELECT * FROM b; FROBNICATE a; SELECT * FROM a; SELECT * FROM c;",
        {1: [], 2: [], 3: [1, 2], 4: [3], 5: [3]},
    ),
    (
        "two statements drawing one plot run in program order, the last one's plot kept",
        """SELECT * FROM d TO EXPLAIN m WITH summary.plot_type = dot;
           SELECT * FROM d TO EXPLAIN m WITH summary.plot_type = bar;
           SELECT * FROM d TO EXPLAIN m WITH explain.plot = 'other.png';""",
        {1: [], 2: [1], 3: []},
    ),
    (
        "models: SHOW MODELS reads them all, DROP MODEL writes one",
        f"""{TRAIN.format("m")}
            SHOW MODELS;
            DESCRIBE MODEL m;
            {TRAIN.format("m2")}
            DROP MODEL m;
            SHOW TRAIN m;""",
        {1: [], 2: [1], 3: [1], 4: [2], 5: [2, 3], 6: [5]},
    ),
]


@pytest.mark.parametrize(("what", "program", "after"), DAGS, ids=[d[0] for d in DAGS])
def test_dag(what, program, after):
    assert edges(program) == after


IO_KEYS = StatementIO.__dataclass_fields__


def test_parse_json_of_the_iris_example(capsys):
    assert main(["parse", str(ROOT / "examples" / "iris.sql"), "--json"]) == 0
    program = json.loads(capsys.readouterr().out)
    assert program["dag"] == {
        "s1-create": [],
        "s2-create": ["s1-create"],
        "s3-create": ["s1-create"],
        "s4-train-iris-xgboost": ["s2-create"],
        "s5-train-iris-dnn": ["s2-create"],
        "s6-predict-iris-xgboost-pred-class": ["s3-create", "s4-train-iris-xgboost"],
        "s7-predict-iris-dnn-pred-class": ["s3-create", "s5-train-iris-dnn"],
        "s8-select": ["s6-predict-iris-xgboost-pred-class", "s7-predict-iris-dnn-pred-class"],
    }
    predict = program["statements"][5]
    assert predict.pop("after") == program["dag"][predict["id"]]
    io = {key: predict.pop(key) for key in IO_KEYS}
    assert io == {
        "reads_tables": ["iris_test"],
        "writes_tables": ["iris_xgboost_pred"],
        "reads_models": ["iris_xgboost"],
        "writes_models": [],
        "reads_all_models": False,
        "writes_files": [],
        "barrier": False,
    }
    iris = analyze(parse((ROOT / "examples" / "iris.sql").read_text()))
    assert ir.from_dict(predict) == iris[5]  # the rest is the statement's IR


def test_parse_summary_and_errors(tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text("SET threads = 1;\nSHOW MODELS;\n")
    assert main(["parse", str(program), "--dialect", "mysql"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "s1-set: barrier: runs after and before every other statement; after nothing",
        "s2-show-models: reads every model; after s1-set",
    ]
    program.write_text("SELECT * FROM t TO EXPLAIN m WITH summary.plot_type = bar;\n")
    assert main(["parse", str(program)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "s1-explain-m: reads t, model m; writes the file m_explain.png; after nothing"
    ]
    program.write_text("SELECT 1;\nSELECT * FROM t TO TRAIN nonsense LABEL y INTO m;\n")
    assert main(["parse", str(program), "--json"]) == 1
    assert capsys.readouterr().err.startswith(f"{program}:2:26: error: unknown estimator")
