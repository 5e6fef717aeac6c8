"""Fuzzing sqlml's front end: any input gives a result or a SqlmlError, in bounded time.

The Hypothesis tests drive the same targets as the atheris fuzzers in ``fuzz/`` (see
docs/reliability.md): parse -> analyze -> dependencies and ``sqlml check`` for programs in
every dialect, attribute values against every estimator's schema, and datasource URLs,
whose sentinel password must never show. The statement generators are those of
tests/test_parser_properties.py, which checks the parser alone; here the whole front end
runs. The last tests run each atheris target for a few seconds.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_parser_properties import programs, spaced_soup, token_soup

from sqlml.datasources.url import parse_url
from sqlml.errors import CheckError, DatasourceError, ParseError, SqlmlError
from sqlml.grammar import parse
from sqlml.grammar.parser import _parser
from sqlml.grammar.recovery import MAX_ERRORS, parse_all
from sqlml.plan import dependencies
from sqlml.semantics import analyze
from sqlml.semantics.estimators import ESTIMATORS
from sqlml.statements.sql.syntax import SqlNode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))
import fuzz_targets  # noqa: E402

# No per-example deadline: Hypothesis's is wall-clock time, which a busy machine stretches;
# the adversarial tests below look for super-linear paths (regex backtracking, re-parsing)
# by the processor time they take.
BOUNDED = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
dialects = st.sampled_from(fuzz_targets.DIALECTS)


@pytest.fixture(autouse=True, scope="module")
def _no_user_models():
    with fuzz_targets.no_user_models():
        for dialect in fuzz_targets.DIALECTS:  # warm up: imports and caches before any deadline
            for sql in fuzz_targets.seeds()[:20]:
                fuzz_targets.program(sql, dialect)
        yield


# Programs ----------------------------------------------------------------------------------

unicode_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=300)
random_bytes = st.binary(max_size=300).map(lambda b: b.decode("utf-8", "replace"))


@BOUNDED
@given(st.one_of(programs.map(lambda p: p[0]), token_soup, spaced_soup), dialects)
def test_generated_programs_pass_the_front_end_or_fail_cleanly(text, dialect):
    fuzz_targets.program(text, dialect)


@BOUNDED
@given(st.one_of(unicode_text, random_bytes), dialects)
def test_random_text_and_bytes_pass_the_front_end_or_fail_cleanly(text, dialect):
    fuzz_targets.program(text, dialect)


# Attribute values: numbers of every size, strings, booleans, nested lists.
huge_numbers = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(1, 400).map(lambda n: "9" * n),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e999", "-1e999", "1e-999", ".5", "+3", "0.0", "9223372036854775808"]),
)
scalars = st.one_of(
    huge_numbers,
    st.sampled_from(["TRUE", "false", "'x'", '"y"', "reg:squarederror", "a.b/c", "''"]),
    st.text(
        st.characters(blacklist_categories=["Cs"], blacklist_characters="'\\"), max_size=10
    ).map(lambda s: f"'{s}'"),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4).map(lambda v: f"[{', '.join(v)}]"),
    max_leaves=12,
)
attribute_names = st.sampled_from(
    [
        *sorted({name for e in ESTIMATORS.values() for name in e.attributes}),
        *["predict.batch_size", "validation.metrics", "explain.plot", "model.x", "a", ""],
    ]
)
attributes = st.lists(st.tuples(attribute_names, values), min_size=1, max_size=4).map(
    lambda pairs: ", ".join(f"{name} = {value}" for name, value in pairs)
)


@BOUNDED
@given(st.integers(0, 63), st.integers(0, 63), st.one_of(attributes, unicode_text), dialects)
@example(0, 0, "max_depth = " + "9" * 5000, "duckdb")  # was: ValueError from int()
@example(0, 0, "optimizer.learning_rate = " + "9" * 400, "duckdb")  # was: OverflowError
@example(2, 0, "SELECT " + "(" * 300 + "1" + ")" * 300, "duckdb")  # was: RecursionError
def test_statement_templates_pass_the_front_end_or_fail_cleanly(template, estimator, text, dialect):
    fuzz_targets.templated(template, estimator, text, dialect)


schema_entries = st.sampled_from(
    [(name, attribute) for name, e in ESTIMATORS.items() for attribute in e.attributes]
)


@BOUNDED
@given(schema_entries, values)
def test_attribute_values_are_checked_against_the_schemas(entry, value):
    """An estimator's schema takes a value or refuses it with a CheckError, never a crash."""
    estimator, attribute = entry
    text = f"SELECT * FROM t TO TRAIN {estimator} WITH {attribute} = {value} LABEL y INTO m;"
    try:
        analyze(parse(text))
    except SqlmlError as error:
        assert isinstance(error, ParseError | CheckError), error.render()


# Regressions found by fuzzing --------------------------------------------------------------

DEEP = "(" * 3000 + "1" + ")" * 3000
CRASHES = {
    "nested parentheses in a query": f"SELECT {DEEP};",
    "nested parentheses before TO TRAIN": f"SELECT {DEEP} TO TRAIN xgboost.gbtree LABEL y INTO m;",
    "nested parentheses in validation.select": (
        f"SELECT 1 TO TRAIN xgboost.gbtree WITH validation.select = 'SELECT {DEEP}' LABEL y INTO m;"
    ),
    # found by fuzz/fuzz_parser.py: DuckDB's struct braces, nested
    "nested braces": 'SELECT "a""b", `c``d` ' + "{" * 100 + "s FROM t;",
    "an integer too long for int()": "SELECT 1 TO TRAIN xgboost.gbtree WITH max_depth = "
    + "9" * 5000
    + " LABEL y INTO m;",
    "an integer too large for a float": "SELECT 1 TO TRAIN DNNClassifier WITH "
    "optimizer.learning_rate = " + "9" * 400 + " LABEL y INTO m;",
    "an infinite float": "SELECT 1 TO TRAIN DNNClassifier WITH optimizer.learning_rate = 1e999 "
    "LABEL y INTO m;",
}


@pytest.mark.parametrize("text", CRASHES.values(), ids=CRASHES.keys())
@pytest.mark.parametrize("dialect", fuzz_targets.DIALECTS)
def test_inputs_that_crashed_now_fail_cleanly(text, dialect):
    with pytest.raises(SqlmlError) as raised:
        analyze(parse(text), dialect)
    assert raised.value.line is not None and raised.value.hint, raised.value.render()
    fuzz_targets.program(text, dialect)  # sqlml check's path, and the dependency analysis


def test_numbers_out_of_range_are_parse_errors_at_the_number():
    text = "SELECT 1 TO TRAIN m WITH a = [1, 9223372036854775807, 2.5e300], b = 1e999 INTO n;"
    with pytest.raises(ParseError, match=r"the number 1e999 is out of range") as raised:
        parse(text)
    assert (raised.value.line, raised.value.column) == (1, text.index("1e999") + 1)
    fine = parse(text.replace(", b = 1e999", "")).statements[0]
    assert fine.attributes[0].value == (1, 2**63 - 1, 2.5e300)
    with pytest.raises(ParseError, match="out of range"):
        parse("SELECT 1 TO TRAIN m COLUMN f(x, -9223372036854775809) INTO n;")


def test_deep_nesting_is_a_check_error_with_a_hint():
    with pytest.raises(CheckError, match="nested too deeply") as raised:
        analyze(parse(CRASHES["nested parentheses in a query"]))
    assert "WITH" in raised.value.hint
    condition = f"ASSERT ({DEEP}) = 1;"  # an ASSERT's condition is checked by sqlglot too
    with pytest.raises(CheckError, match="this condition is nested too deeply") as raised:
        analyze(parse(condition))
    assert (raised.value.line, raised.value.column) == (1, len("ASSERT ") + 1)
    # Other statements go to the database unchecked; the dependency analysis, which cannot
    # read this one, orders it after and before every other statement.
    statements = analyze(parse(f"SELECT 1; INSERT INTO t VALUES ({DEEP}); SELECT 2;"))
    graph = dependencies(statements, "duckdb")
    assert graph.io[statements[1].id].barrier
    assert graph.after[statements[2].id] == (statements[1].id,)


# Adversarial inputs for the lexer's regular expressions and the error recovery --------------

N = 100_000
ADVERSARIAL = {
    "quotes": "SELECT " + "'" * N,
    "escaped quotes, never closed": "SELECT '" + "\\'" * (N // 2),
    "doubled quotes, never closed": "SELECT '" + "''" * (N // 2),
    "double quotes": "SELECT " + '"' * N,
    "backquotes": "SELECT " + "`" * N,
    "dashes": "SELECT " + "-" * N,
    "slashes": "SELECT " + "/" * N,
    "comment openers": "SELECT " + "/* " * (N // 3),
    "stars in an unclosed comment": "SELECT /*" + "*" * N,
    "TO repeated": "SELECT " + "TO " * (N // 3),
    "TO then blank space": "SELECT * FROM t TO" + " " * N + "X;",
    "TO TRAIN repeated": "SELECT 1 TO TRAIN " * (N // 18),
    "semicolons": ";" * N,
    "a 100 KB string": "SELECT '" + "x" * N + "';",
    "a 100 KB name": "SELECT 1 TO TRAIN xgboost.gbtree LABEL y INTO " + "m" * N + ";",
    "an error in every statement": "SELECT 1;\nSELECT 1 TO TRAIN;\n" * (N // 29),
    "nested lists": "SELECT 1 TO TRAIN xgboost.gbtree WITH a = "
    + "[" * (N // 20)
    + "1"
    + "]" * (N // 20)
    + " LABEL y INTO m;",
    "nested calls": "SELECT 1 TO TRAIN DNNClassifier COLUMN "
    + "f(" * (N // 20)
    + "x"
    + ")" * (N // 20)
    + " LABEL y INTO m;",
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_100kb_inputs_end_in_bounded_time(text):
    started = time.process_time()  # this process's, which other processes' load leaves out
    fuzz_targets.program(text)
    elapsed = time.process_time() - started
    # Linear work on 100 KB takes seconds at most (sqlglot reads about 50 KB a second of
    # some garbage); a quadratic path takes minutes.
    assert elapsed < 30, f"{elapsed:.1f}s"


PIECES = ["'", "\\'", '"', "`", "-", "--", "/", "/*", "*", "*/", "TO ", "TO\n", "TO TRAIN"]
PIECES += [" ", "x", ";", "\\", "a.", "a:", "1", "1e", ".", "IF ", "SHOW ", "DESC ", "MODEL "]


def test_no_terminal_of_the_grammar_backtracks_catastrophically():
    """Each terminal's regular expression against 20 KB of every pair of tricky pieces."""
    flags = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}
    for terminal in _parser().terminals:
        pattern = re.compile(
            terminal.pattern.to_regexp(),
            sum(flags[f] for f in terminal.pattern.flags),
        )
        for first, second in itertools.product(PIECES, repeat=2):
            text = "SELECT " + (first + second) * (20_000 // len(first + second))
            started = time.process_time()  # other processes' load left out
            for start in (0, 7):  # a statement's start, and the pieces' own
                pattern.match(text, start)
            elapsed = time.process_time() - started
            # Linear matching takes about a millisecond; backtracking, seconds to forever.
            assert elapsed < 1, f"{terminal.name} on {first + second!r}: {elapsed:.2f}s"


def test_recovery_reports_each_bad_statement_once_and_stops_at_the_limit():
    text = "SELECT 1;\nSELECT 1 TO TRAIN;\n" * (MAX_ERRORS + 50)
    program, errors = parse_all(text)
    assert len(errors) == MAX_ERRORS + 1
    assert [e.line for e in errors[:-1]] == list(range(2, 2 * MAX_ERRORS + 1, 2))
    assert errors[-1].message.startswith(f"stopped after {MAX_ERRORS} errors")
    assert len(program.statements) == MAX_ERRORS  # the good ones before the last error
    assert all(isinstance(s, SqlNode) for s in program.statements)

    text = "SELECT 1 TO TRAIN;\nSELECT 2;\nSELECT 'a;b' TO TRAIN m;\nSELECT 3;"
    program, errors = parse_all(text)
    assert [e.line for e in errors] == [1, 3]
    assert [s.text for s in program.statements] == ["SELECT 2", "SELECT 3"]


# Datasource URLs ---------------------------------------------------------------------------

url_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=60)


@BOUNDED
@given(url_text)
@example("postgresql://")
@example("mysql://[::1/x")
def test_any_url_parses_or_raises_datasource_error(text):
    fuzz_targets.url(text)


@BOUNDED
@given(st.sampled_from(["mysql", "postgresql", "mariadb", "postgres"]), url_text, url_text)
@example("mysql", "/pw", "127.0.0.1:3306/test")  # was: the port error quoted the password
@example("mysql", "", "")
def test_a_sentinel_password_never_shows(scheme, rest, location):
    fuzz_targets.url(f"{scheme}://user:{fuzz_targets.SENTINEL_PASSWORD}{rest}@{location}")
    fuzz_targets.url(f"{scheme}://user:{fuzz_targets.SENTINEL_PASSWORD}{rest}")


def test_a_password_that_breaks_the_url_is_not_quoted_in_the_error():
    with pytest.raises(DatasourceError) as raised:
        parse_url("mysql://root:S3ntinel/pw@127.0.0.1:3306/test")
    assert "S3ntinel" not in raised.value.render()
    assert "percent-encode" in raised.value.hint
    parsed = parse_url("mysql://root:S3ntinel%2Fpw@127.0.0.1:3306/test")
    assert (parsed.password, parsed.host, parsed.port) == ("S3ntinel/pw", "127.0.0.1", 3306)


# The atheris fuzzers, briefly --------------------------------------------------------------


def test_the_atheris_fuzzers_run_without_a_crash(tmp_path):
    """Each fuzzer runs a few seconds from its seeds (longer runs: docs/reliability.md)."""
    pytest.importorskip("atheris")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    runs = {}
    for name in ("fuzz_parser", "fuzz_url"):
        folder = tmp_path / name
        (folder / "corpus").mkdir(parents=True)
        runs[name] = subprocess.Popen(
            [sys.executable, str(ROOT / "fuzz" / f"{name}.py"), "-max_total_time=3", "corpus"],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    for name, process in runs.items():
        output, _ = process.communicate(timeout=240)
        assert process.returncode == 0, output[-3000:]
        assert "Done" in output, output[-3000:]
        assert not list((tmp_path / name).glob("crash-*")), output[-3000:]
