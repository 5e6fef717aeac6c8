"""What a start loads: ``import sqlml`` nothing heavy; a plain SELECT (``sqlml -e``, ``sqlml
check``) on DuckDB no ML library, no sqlglot (DuckDB's parser reads it), no grammar (it is
split without it) and no standard module that only rarer paths use; an extended statement
the grammar's parser from the cache instead of building it; a cache that is corrupt or cannot
be written only costs a build. Start-up time itself is measured by benchmarks/startup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lark.lark
import numpy as np
import pytest
from conftest import KINDS, datasource_url

from sqlml.datasources import connect
from sqlml.datasources.duckdb import parser as duckdb_parser
from sqlml.errors import ParseError
from sqlml.grammar import parse, parser
from sqlml.grammar.parser_cache import cache_path
from sqlml.semantics.database_parser import statement_type

# Libraries a plain SELECT does without: the ML ones, sqlglot (about 0.1 s to import) and
# numpy (about 40 ms).
HEAVY = ("tensorflow", "keras", "xgboost", "sklearn", "pandas", "matplotlib", "torch")
HEAVY += ("sqlglot", "numpy")
# What reads the extended statements: Lark's parser and the kinds' rules (the counting of
# grammar builds below imports Lark itself).
GRAMMAR = ("sqlml.grammar.parser", "sqlml.statements.train.syntax")
# Standard modules only rarer paths use: a misspelt name's suggestions, a step's process.
RARE = ("difflib", "subprocess")

# Runs the sqlml command's main in this process, counting Lark's grammar builds, and writes
# what it saw to the file named by its first argument.
_STARTED = """
import json, sys
import lark.lark
builds = []
build = lark.lark.load_grammar
lark.lark.load_grammar = lambda *args, **kwargs: builds.append(1) or build(*args, **kwargs)
from sqlml.cli import main
status = main(sys.argv[3:])
loaded = sorted(m for m in sys.argv[2].split(',') if m in sys.modules)
with open(sys.argv[1], 'w') as report:
    json.dump({'builds': len(builds), 'heavy': loaded}, report)
sys.exit(status)
"""


def start(tmp_path: Path, cache: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """``sqlml -e "SHOW MODELS;"`` (a statement of the grammar's) on a DuckDB file in a fresh
    process using the cache folder ``cache``: the process and what it reported."""
    url = f"duckdb:///{tmp_path / 'start.duckdb'}"
    done, seen = started(tmp_path, cache, ["-e", "SHOW MODELS;", "--datasource", url])
    assert done.stdout.splitlines()[-1] == "(0 rows)"
    return done, seen


def started(
    tmp_path: Path, cache: Path, arguments: list[str], watched: tuple[str, ...] = HEAVY
) -> tuple[subprocess.CompletedProcess, dict]:
    """``sqlml ARGUMENTS``, which must succeed, in a fresh process using the cache folder
    ``cache``: the process, and its grammar builds and the ``watched`` modules it loaded."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", _STARTED, str(report), ",".join(watched), *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "SQLML_CACHE_DIR": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text())


def parser_files(cache: Path) -> list[Path]:
    return sorted((cache / "parsers").iterdir())


def test_a_plain_select_loads_neither_the_grammar_nor_an_ml_library(tmp_path):
    url = f"duckdb:///{tmp_path / 'start.duckdb'}"
    arguments = ["-e", "SELECT 1 AS one;", "--datasource", url]
    done, seen = started(tmp_path, tmp_path / "cache", arguments, (*HEAVY, *GRAMMAR, *RARE))
    assert done.stdout.splitlines() == [" one", "-----", "   1", "(1 row)"]
    assert seen == {"builds": 0, "heavy": []} and done.stderr == ""
    assert not (tmp_path / "cache" / "parsers").exists()


def test_an_extended_statement_builds_the_grammar_once_then_reads_it_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    first, seen = start(tmp_path, cache)
    assert seen == {"builds": 1, "heavy": []}
    assert [file.suffix for file in parser_files(cache)] == [".json"]  # no part left
    second, seen = start(tmp_path, cache)
    assert seen == {"builds": 0, "heavy": []}
    assert first.stderr == second.stderr == ""


def test_importing_sqlml_loads_no_library():
    watched = (*HEAVY, "numpy", "duckdb", "lark")
    code = f"import sys, sqlml; print(sorted(m for m in {watched!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_checking_plain_selects_loads_no_ml_library_nor_sqlglot(tmp_path):
    program = tmp_path / "selects.sql"
    program.write_text("SELECT 1;\nSELECT a, b FROM t WHERE a > 1 ORDER BY b;\n")
    cache = tmp_path / "cache"
    done, seen = started(tmp_path, cache, ["check", str(program)], (*HEAVY, *GRAMMAR))
    assert seen == {"builds": 0, "heavy": []} and done.stderr == ""


def test_checking_trainings_and_evaluations_loads_no_ml_library_nor_numpy(tmp_path):
    """The metrics' names (sqlml.metrics) are checked without NumPy, which computes them."""
    program = tmp_path / "models.sql"
    program.write_text(
        "SELECT a, b FROM t TO TRAIN xgboost.gbtree WITH validation.metrics = 'f1_score'\n"
        "LABEL b INTO m;\nSELECT a, b FROM t TO EVALUATE m WITH validation.metrics = 'auc'\n"
        "LABEL b INTO metrics;\nSELECT * FROM t TO PREDICT p.b USING m;\n"
    )
    watched = tuple(module for module in HEAVY if module != "sqlglot")
    done, seen = started(tmp_path, tmp_path / "cache", ["check", str(program)], watched)
    assert seen["heavy"] == [] and done.stderr == ""


# A table an XGBoost model learns exactly, and what its predictions got wrong.
_XGBOOST_DATA = (
    "CREATE TABLE d AS SELECT i::DOUBLE AS x, (i % 3)::DOUBLE AS y,"
    " CASE WHEN i >= 20 THEN 1 ELSE 0 END AS label FROM range(40) t(i);\n"
)
_XGBOOST = """
SELECT x, y, label FROM d TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", train.num_boost_round = 5 LABEL label INTO {model};
SELECT x, y FROM d TO PREDICT {model}_out.label USING {model};
SELECT count(*) AS wrong FROM {model}_out JOIN d USING (x) WHERE {model}_out.label <> d.label;
"""
_FOREST = """
SELECT x, y, label FROM d TO TRAIN sklearn.ensemble.RandomForestClassifier
WITH model.n_estimators = 3 LABEL label INTO forest;
SELECT x, y FROM d TO PREDICT forest_out.label USING forest;
SELECT count(*) AS rows FROM forest_out;
"""
# The part of SciPy that scikit-learn imports and XGBoost's core does not.
SCIPY_OF_SKLEARN = ("scipy.linalg", "scipy.optimize", "scipy.stats", "scipy.spatial")


@pytest.mark.parametrize("kind", KINDS)
def test_an_xgboost_training_and_prediction_load_neither_scikit_learn_nor_pandas(
    kind, tmp_path, unique_name
):
    """XGBoost loads without its scikit-learn API (sqlml.imports.load hides scikit-learn from
    xgboost.compat): no scikit-learn, no pandas, only the part of SciPy XGBoost's core uses;
    and each database's write makes its Arrow values without pyarrow.array and
    pyarrow.scalar, which import pandas."""
    url = datasource_url(kind, tmp_path)
    source = connect(url)
    i = np.arange(40)
    rows = {"x": i * 1.0, "y": i % 3 * 1.0, "label": (i >= 20).astype(np.int64)}
    source.write_table([unique_name], rows)
    source.close()
    d, m = unique_name, f"{unique_name}_m"
    program = (
        f"SELECT x, y, label FROM {d} TO TRAIN xgboost.gbtree WITH objective = "
        f'"binary:logistic", train.num_boost_round = 5 LABEL label INTO {m};\n'
        f"SELECT x, y FROM {d} TO PREDICT {m}_out.label USING {m};\n"
        f"SELECT count(*) AS wrong FROM {m}_out JOIN {d} ON {m}_out.x = {d}.x\n"
        f"WHERE {m}_out.label <> {d}.label;\n"
        f"DROP TABLE {d}; DROP TABLE {m}_out; DROP MODEL {m};"
    )
    watched = ("xgboost", "sklearn", "pandas", "tensorflow", *SCIPY_OF_SKLEARN)
    done, seen = started(
        tmp_path, tmp_path / "cache", ["-e", program, "--datasource", url], watched
    )
    assert done.stdout.split()[:5] == ["wrong", "-------", "0", "(1", "row)"], done.stdout
    assert seen["heavy"] == ["xgboost"]


def test_scikit_learn_imports_after_xgboost_loaded_without_it_and_both_keep_working(tmp_path):
    """XGBoost, then scikit-learn, then XGBoost again, in one process, one step at a time."""
    url = f"duckdb:///{tmp_path / 'both.duckdb'}"
    program = tmp_path / "both.sql"
    program.write_text(
        _XGBOOST_DATA + _XGBOOST.format(model="m") + _FOREST + _XGBOOST.format(model="n")
    )
    arguments = ["run", str(program), "--datasource", url, "--jobs", "1"]
    done, seen = started(tmp_path, tmp_path / "cache", arguments, ("xgboost", "sklearn"))
    assert done.stdout.split() == [
        *("wrong", "-------", "0", "(1", "row)"),
        *("rows", "------", "40", "(1", "row)"),
        *("wrong", "-------", "0", "(1", "row)"),
    ]
    assert seen["heavy"] == ["sklearn", "xgboost"]


def test_xgboost_loads_whole_in_a_process_of_the_user_s():
    """Outside sqlml's own programs (a notebook's kernel, with the magic) nothing is hidden:
    the user may use XGBoost's scikit-learn API next."""
    code = (
        "from sqlml.models.registry import family; family('xgboost').trainer()\n"
        "import xgboost; xgboost.XGBClassifier(n_estimators=1); print('whole')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["whole"]


def test_a_syntax_error_is_shown_as_sqlglot_places_it(tmp_path):
    """DuckDB's parser only tells that the SELECT is wrong; sqlglot then says where."""
    program = tmp_path / "wrong.sql"
    program.write_text("SELECT 1;\nSELECT a\nFROM t WHERE;\n")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", _STARTED, str(report), "sqlglot", "check", str(program)],
        capture_output=True,
        text=True,
        env={**os.environ, "SQLML_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"{program}:3:") and "SQL syntax error" in done.stderr
    assert json.loads(report.read_text())["heavy"] == ["sqlglot"]


@pytest.mark.parametrize(
    ("sql", "dialect", "read"),
    [
        ("SELECT a FROM t WHERE b > 1", "duckdb", "SELECT"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "duckdb", "SELECT"),
        ("SHOW TABLES", "duckdb", "SELECT"),
        ("INSERT INTO t VALUES (1)", "duckdb", "INSERT"),
        ("SELEC 1", "duckdb", None),  # a fault: sqlglot explains it
        ("SELECT 1; SELECT 2", "duckdb", None),  # not one statement
        ("SELECT 1", "mysql", None),  # no parser of MySQL's in this process
    ],
)
def test_the_database_parser_reads_one_statement_of_duckdb(sql, dialect, read):
    assert statement_type(sql, dialect) == read


def test_the_parser_reads_with_the_run_s_duckdb_file_and_leaves_it_to_the_run(tmp_path):
    """A run's DuckDB file lends the parser its database (none of its own created in memory);
    a file not there yet is not created, one that cannot be opened leaves DuckDB's default."""
    duckdb = pytest.importorskip("duckdb")
    path = str(tmp_path / "run.duckdb")
    try:
        duckdb_parser.parse_on(path)
        assert statement_type("SELECT 1", "duckdb") == "SELECT"
        assert not Path(path).exists()
        duckdb.connect(path).close()
        assert statement_type("SELEC 1", "duckdb") is None
        held = duckdb_parser._held
        assert held is not None and held.execute("PRAGMA database_list").fetchall()[0][2] == path
        run = duckdb.connect(path)  # the run's connection: the same database
        duckdb_parser.opened(path)
        assert duckdb_parser._held is None and run.sql("SELECT 1").fetchall() == [(1,)]
        run.close()
        duckdb_parser.parse_on(":memory:")  # each connection its own: none shared
        assert duckdb_parser._file is None
        duckdb_parser.parse_on(str(tmp_path / "not-a-database.duckdb"))
        (tmp_path / "not-a-database.duckdb").write_text("text")
        assert statement_type("INSERT INTO t VALUES (1)", "duckdb") == "INSERT"
        assert duckdb_parser._held is None
    finally:
        duckdb_parser.parse_on(None)


# Runs the sqlml command's main in this process and prints whether DuckDB's parser created its
# default database (duckdb.extract_statements reads with it).
_DEFAULT_PARSER = """
import sys
import duckdb
used = []
parse = duckdb.extract_statements
duckdb.extract_statements = lambda *args: used.append(1) or parse(*args)
from sqlml.cli import main
status = main(sys.argv[1:])
print('default parser used:', bool(used))
sys.exit(status)
"""


def test_a_run_on_a_duckdb_file_parses_with_the_file_s_database(tmp_path):
    """No second database (DuckDB's default, about 20 ms to create) just to parse."""
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "run.duckdb"
    duckdb.connect(str(path)).close()
    arguments = ["-e", "SELECT 1 AS one;", "--datasource", f"duckdb:///{path}"]
    done = subprocess.run(
        [sys.executable, "-c", _DEFAULT_PARSER, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "SQLML_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["(1 row)", "default parser used: False"]


def test_a_corrupt_cached_parser_is_rebuilt_without_a_word(tmp_path):
    cache = tmp_path / "cache"
    start(tmp_path, cache)
    [cached] = parser_files(cache)
    cached.write_bytes(cached.read_bytes()[:1000])  # cut short, as by a full disk
    done, seen = start(tmp_path, cache)
    assert seen["builds"] == 1 and done.stderr == ""
    assert start(tmp_path, cache)[1]["builds"] == 0  # written again, whole


@pytest.mark.parametrize("where", ["a file", "no home"])
def test_a_cache_folder_that_cannot_be_written_costs_only_a_build(tmp_path, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the folder would be")
    cache = blocker / "cache" if where == "a file" else Path(os.devnull) / "home"
    for _ in range(2):
        done, seen = start(tmp_path, cache)
        assert seen == {"builds": 1, "heavy": []}
        # Only the step logs' own warning (they live in the cache folder too): none of the parser.
        assert all(
            line.startswith("sqlml: warning: step logs are not kept")
            for line in done.stderr.splitlines()
        ), done.stderr
    assert blocker.read_text() == "a file where the folder would be"


# The shell, its modules listed at exit (after its first prompt and an end of input).
_SHELL = """
import atexit, sys
from sqlml.cli import main
watched = ('sqlglot', 'tensorflow', 'xgboost', 'sklearn', 'pandas')
atexit.register(lambda: print('loaded:', sorted(m for m in watched if m in sys.modules)))
sys.exit(main(sys.argv[1:]))
"""


def test_the_shell_shows_its_first_prompt_without_sqlglot(tmp_path):
    """sqlglot (about 0.1 s) loads with the first statement, not before the prompt."""
    pexpect = pytest.importorskip("pexpect")
    url = f"duckdb:///{tmp_path / 'shell.duckdb'}"
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    env["SQLML_HISTORY"] = str(tmp_path / "history")
    shell = pexpect.spawn(
        sys.executable,
        ["-c", _SHELL, "repl", "--datasource", url],
        env=env,
        dimensions=(40, 200),
        encoding="utf-8",
        timeout=300,  # a deadlock guard
    )
    shell.expect(r"sqlml \[")
    shell.sendeof()
    shell.expect(r"loaded: (\[.*\])")
    assert shell.match.group(1) == "[]"


def test_the_cached_parser_reads_programs_as_a_built_one(tmp_path, monkeypatch):
    program = (
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.hidden_units = [10, 20]\n"
        "  COLUMN sepal_length, sepal_width LABEL class INTO m;\n"
        "SELECT * FROM iris_test TO PREDICT iris_test.class USING m;\n"
    )
    wrong = [  # error messages use the parser's state: what it accepts, what it read
        "SELECT * FROM t TO TRAIN DNNClassifier WITH a = LABEL c INTO m;",
        "SELECT * FROM t TO PREDICT p.class USING;",
        "SELECT * FROM t TO TRAIN WITH a = 1 LABEL c INTO m;",
    ]
    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path))
    parser._grammar.cache_clear()
    try:
        built = parse(program), [_error(text) for text in wrong]
        path = cache_path(parser._grammar(parser.fragments()).lark.source_grammar)
        assert path.is_file()
        parser._grammar.cache_clear()
        monkeypatch.setattr(lark.lark, "load_grammar", _no_build)
        assert (parse(program), [_error(text) for text in wrong]) == built  # loaded
    finally:
        parser._grammar.cache_clear()


def _error(text: str) -> tuple[str, int | None, int | None, str | None]:
    with pytest.raises(ParseError) as raised:
        parse(text)
    return str(raised.value), raised.value.line, raised.value.column, raised.value.hint


def _no_build(*args: object, **kwargs: object) -> None:
    raise AssertionError("the grammar was built, not loaded from the cache")
