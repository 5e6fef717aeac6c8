"""TO MAXIMIZE / TO MINIMIZE: SQLFlow's woodcarving and shipment examples give their documented
optimum, integer and continuous variables differ where they should, infeasible and unbounded
programs are errors that write nothing (on the four databases), and ``sqlml check`` places the
mistakes it finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import datasource_url
from conftest import fetch_rows as rows
from conftest import run_program as run

from sqlml.checking import check_program
from sqlml.datasources import connect
from sqlml.errors import ParseError
from sqlml.grammar import parse

SERVERS = ["duckdb", "sqlite", "mysql", "postgresql"]

PRODUCTS = """CREATE TABLE {t} (product VARCHAR(20), price DOUBLE PRECISION,
  materials_cost DOUBLE PRECISION, other_cost DOUBLE PRECISION, finishing DOUBLE PRECISION,
  carpentry DOUBLE PRECISION, max_num INTEGER);
INSERT INTO {t} VALUES ('soldier', 27, 10, 14, 2, 1, 40), ('train', 21, 9, 10, 1, 1, 10000);
"""

# SQLFlow's doc/tutorial/optimization_guide.md, example 1: soldiers 20, trains 60, profit 180.
WOODCARVING = """SELECT * FROM {t}
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100,
           SUM(carpentry * amount) <= 80,
           amount <= max_num
WITH variables = "amount(product)",
     var_type = "NonNegativeIntegers"
USING glpk
INTO {out};
"""

SHIPMENT_DATA = """CREATE TABLE {t}_plants (plants VARCHAR(20), capacity DOUBLE PRECISION);
INSERT INTO {t}_plants VALUES ('plantA', 100), ('plantB', 90);
CREATE TABLE {t}_markets (markets VARCHAR(20), demand DOUBLE PRECISION);
INSERT INTO {t}_markets VALUES ('marketA', 130), ('marketB', 60);
CREATE TABLE {t}_routes (plants VARCHAR(20), markets VARCHAR(20), distance DOUBLE PRECISION);
INSERT INTO {t}_routes VALUES ('plantA', 'marketA', 140), ('plantA', 'marketB', 210),
  ('plantB', 'marketA', 300), ('plantB', 'marketB', 90);
"""

# Example 2: two index columns, GROUP BY constraints; the documented optimum is 28400.
SHIPMENT = """SELECT r.plants AS plants, r.markets AS markets, r.distance AS distance,
       p.capacity AS capacity, m.demand AS demand
FROM {t}_routes AS r
LEFT JOIN {t}_plants AS p ON r.plants = p.plants
LEFT JOIN {t}_markets AS m ON r.markets = m.markets
TO MINIMIZE SUM(amount * distance)
CONSTRAINT SUM(amount) <= capacity GROUP BY plants,
           SUM(amount) >= demand GROUP BY markets
WITH variables = "amount(plants, markets)",
     var_type = "NonNegativeIntegers"
INTO {out};
"""

ITEMS = """CREATE TABLE {t} (item VARCHAR(20), weight DOUBLE PRECISION, worth DOUBLE PRECISION);
INSERT INTO {t} VALUES ('a', 6, 10), ('b', 5, 7), ('c', 5, 6);
"""

KNAPSACK = """SELECT * FROM {t}
TO MAXIMIZE SUM(worth * take)
CONSTRAINT SUM(weight * take) <= 10, take <= 1
WITH variables = "take(item)", var_type = "{var_type}"
INTO {out};
"""


@pytest.fixture(params=SERVERS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return datasource_url(request.param, tmp_path)


@pytest.fixture
def tables(url: str, unique_name: str):
    """A unique prefix for the test's tables (the MySQL database is shared); dropped after."""
    yield unique_name
    ds = connect(url)
    try:
        for suffix in ("", "_out", "_plants", "_markets", "_routes"):
            ds.execute(f"DROP TABLE IF EXISTS {unique_name}{suffix}")
    finally:
        ds.close()


def test_woodcarving_gives_the_documented_optimum(tmp_path, url, tables, capsys):
    t, out = tables, f"{tables}_out"
    program = PRODUCTS.format(t=t) + WOODCARVING.format(t=t, out=out)
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    assert "maximized SUM((price - materials_cost - other_cost) * amount) = 180 (optimal" in err
    found = rows(url, f"SELECT product, price, max_num, amount FROM {out} ORDER BY product")
    assert found == [("soldier", 27.0, 40, 20), ("train", 21.0, 10000, 60)]


def test_shipment_gives_the_documented_optimum(tmp_path, url, tables, capsys):
    t, out = tables, f"{tables}_out"
    status, err = run(
        tmp_path, url, SHIPMENT_DATA.format(t=t) + SHIPMENT.format(t=t, out=out), capsys
    )
    assert status == 0, err
    assert "minimized SUM(amount * distance) = 28400 (optimal" in err
    found = rows(url, f"SELECT plants, markets, amount FROM {out} ORDER BY plants, markets")
    assert found == [
        ("plantA", "marketA", 100),
        ("plantA", "marketB", 0),
        ("plantB", "marketA", 30),
        ("plantB", "marketB", 60),
    ]


@pytest.mark.parametrize(
    ("var_type", "takes", "worth"),
    [("NonNegativeReals", [1.0, 0.8, 0.0], "15.6"), ("Binary", [0, 1, 1], "13")],
)
def test_continuous_and_integer_variables(tmp_path, url, tables, capsys, var_type, takes, worth):
    t, out = tables, f"{tables}_out"
    program = ITEMS.format(t=t) + KNAPSACK.format(t=t, out=out, var_type=var_type)
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    assert f"maximized SUM(worth * take) = {worth} (optimal" in err
    found = [take for (take,) in rows(url, f"SELECT take FROM {out} ORDER BY item")]
    assert found == pytest.approx(takes)
    assert all(type(take) is type(takes[0]) for take in found)


def test_the_variable_named_by_its_column_is_written_beside_it(tmp_path, url, tables, capsys):
    t, out = tables, f"{tables}_out"
    program = PRODUCTS.format(t=t) + WOODCARVING.format(t=t, out=out).replace(
        "amount", "product"
    ).replace('"product(product)"', '"product"')
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    found = rows(url, f"SELECT product, product_value FROM {out} ORDER BY product")
    assert found == [("soldier", 20), ("train", 60)]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("SUM(amount) >= 1000", "the problem is infeasible: no values of the variable meet"),
        (
            "amount >= max_num + 1",
            "the problem is infeasible: the constraints without SUM leave "
            "row 1 no value (at least 41 and at most 40)",
        ),
        ("0 * amount >= 1", "cannot hold in row 1, where the variable drops out of it"),
        # Without the variable (SQLFlow's ir_generator_test): checked on the rows, or groups.
        ("price >= 25", "cannot hold in row 2, where the variable drops out of it (0 >= 4)"),
        ("SUM(price) >= 100", "cannot hold in group 1, where the variable drops out of it"),
    ],
)
def test_an_infeasible_problem_writes_nothing(tmp_path, url, tables, capsys, extra, message):
    t, out = tables, f"{tables}_out"
    good = WOODCARVING.format(t=t, out=out)
    status, err = run(tmp_path, url, PRODUCTS.format(t=t) + good, capsys)
    assert status == 0, err
    before = rows(url, f"SELECT product, amount FROM {out} ORDER BY product")
    broken = good.replace("amount <= max_num", f"amount <= max_num, {extra}")
    status, err = run(tmp_path, url, broken, capsys)
    assert status == 1
    assert message in err, err
    assert rows(url, f"SELECT product, amount FROM {out} ORDER BY product") == before


def test_sqlflows_parser_test_form_solves(tmp_path, url, tables, capsys):
    """TestExtendedSyntaxOptimize's form: the domain under the variable's name, and a
    constraint without the variable that the rows meet (SUM(price) <= 48), with warnings."""
    t, out = tables, f"{tables}_out"
    program = PRODUCTS.format(t=t) + WOODCARVING.format(t=t, out=out).replace(
        "amount", "product"
    ).replace('"product(product)"', '"product"').replace(
        'var_type = "NonNegativeIntegers"', 'product = "Integers"'
    ).replace("product <= max_num", "product <= max_num, SUM(price) <= 48")
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    assert "warning: product = 'Integers' is taken as var_type" in err
    assert "warning: the constraint SUM(price) <= 48 does not depend on the variable" in err
    assert "maximized SUM((price - materials_cost - other_cost) * product) = 180" in err
    found = rows(url, f"SELECT product, product_value FROM {out} ORDER BY product")
    assert found == [("soldier", 20), ("train", 60)]


@pytest.mark.parametrize("var_type", ["NonNegativeReals", "NonNegativeIntegers"])
def test_an_unbounded_problem_writes_nothing(tmp_path, url, tables, capsys, var_type):
    t, out = tables, f"{tables}_out"
    program = PRODUCTS.format(t=t) + (
        f"SELECT * FROM {t} TO MAXIMIZE SUM(price * amount) CONSTRAINT SUM(amount) >= 3 "
        f'WITH variables = "amount(product)", var_type = "{var_type}" INTO {out};'
    )
    status, err = run(tmp_path, url, program, capsys)
    assert status == 1
    assert "the problem is unbounded" in err, err
    ds = connect(url)
    try:
        assert not ds.table_exists([out])
    finally:
        ds.close()


def test_an_unknown_column_is_placed_at_its_name(tmp_path, url, tables, capsys):
    t, out = tables, f"{tables}_out"
    program = PRODUCTS.format(t=t) + WOODCARVING.format(t=t, out=out).replace(
        "finishing * amount", "finish * amount"
    )
    status, err = run(tmp_path, url, program, capsys)
    assert status == 1
    assert ":7:16: error: column finish is not in the result of the SELECT" in err, err


def check(text: str) -> list[tuple[int | None, int | None, str, str | None]]:
    return [(e.line, e.column, e.message, e.hint) for e in check_program(text, "duckdb")]


BASE = (
    "SELECT a, b, c FROM t\nTO MAXIMIZE {objective}\nCONSTRAINT {constraint}\nWITH {attrs}\nINTO o;"
)
ATTRS = 'variables = "x(a)", var_type = "NonNegativeReals"'


def checked(objective="SUM(b * x)", constraint="SUM(c * x) <= 10", attrs=ATTRS):
    return check(BASE.format(objective=objective, constraint=constraint, attrs=attrs))


def test_a_good_statement_checks():
    assert checked() == []


@pytest.mark.parametrize(
    ("kwargs", "line", "column", "message"),
    [
        ({"objective": "SUM(x * b * x)"}, 2, 23, "x * b * x multiplies the variable x by"),
        ({"constraint": "SUM(c / x) <= 1"}, 3, 18, "c / x divides by the variable x"),
        ({"objective": "SUM(ABS(b) * x)"}, 2, 17, "ABS(...) is not supported"),
        ({"objective": "SUM(SUM(b) * x)"}, 2, 17, "SUM inside SUM"),
        ({"objective": "b * SUM(x)"}, 2, 13, "column b is outside SUM(...) in the objective"),
        ({"objective": "SUM(b) + x"}, 2, 22, "the variable x is outside SUM(...)"),
        ({"objective": "SUM(b)"}, 2, 13, "the objective SUM(b) does not depend on"),
        ({"constraint": "SUM(c * x) < 10"}, 3, 23, "compares with <, which a linear"),
        ({"constraint": "SUM(c * x) <= d"}, 3, 26, "column d is not in the result"),
        ({"constraint": "x <= c GROUP BY a"}, 3, 28, "has GROUP BY but no SUM"),
        ({"constraint": "SUM(x) <= c"}, 3, 22, "column c is outside SUM(...) in the constraint"),
        ({"constraint": "SUM(t.c * x) <= 1"}, 3, 16, "takes a column of the SELECT's result"),
        ({"objective": "SUM(x / 0)"}, 2, 19, "x / 0 divides by zero in the objective"),
        ({"constraint": "x / (2 - 2) <= 1"}, 3, 14, "x / (2 - 2) divides by zero in the"),
        ({"objective": "SUM(b * x / -0.0)"}, 2, 23, "divides by zero in the objective"),
        ({"attrs": 'var_type = "Reals"'}, 4, 6, "TO MAXIMIZE needs variables"),
        ({"attrs": 'variables = "x(a)"'}, 4, 6, "TO MAXIMIZE needs var_type"),
        ({"attrs": 'variables = "x(a", var_type = "Reals"'}, 4, 6, "is not a variable"),
        ({"attrs": 'variables = "x(z)", var_type = "Reals"'}, 4, 6, "column z is not in"),
        ({"attrs": 'variables = "x(a)", var_type = "Real"'}, 4, 26, "var_type must be one of"),
    ],
)
def test_check_places_each_mistake(kwargs, line, column, message):
    [(found_line, found_column, found, _)] = checked(**kwargs)
    assert message in found
    assert (found_line, found_column) == (line, column), found


def test_an_unknown_var_type_lists_the_domains_and_its_case_is_forgiven():
    [(_, _, message, hint)] = checked(attrs='variables = "x(a)", var_type = "Real"')
    assert "NonNegativeIntegers" in message + (hint or "")
    assert checked(attrs='variables = "x(a)", var_type = "nonnegativeintegers"') == []


def test_an_unknown_solver_is_refused_with_a_hint():
    text = BASE.format(objective="SUM(b * x)", constraint="x <= 1", attrs=ATTRS)
    [error] = check_program(text.replace("INTO o", "USING cplex\nINTO o"), "duckdb")
    assert (error.line, error.column, error.message) == (5, 7, "unknown solver cplex")
    assert "HiGHS" in error.hint


def test_without_with_it_does_not_parse():
    with pytest.raises(ParseError) as raised:
        parse("SELECT * FROM t\nTO MAXIMIZE SUM(p * x)\nCONSTRAINT x <= m\nINTO r;")
    assert (raised.value.line, raised.value.column) == (4, 1)


@pytest.mark.parametrize(
    ("data", "objective", "message"),
    [
        ("(1, 'a', 2, NULL)", "SUM(w * x)", "column w holds NULL (row 1)"),
        ("(1, 'a', 2, 3)", "SUM(name * x)", "column name holds text, not numbers"),
        ("(1, 'a', 0, 3)", "SUM(w / g * x)", "an expression divides by zero"),
    ],
)
def test_data_the_expressions_cannot_use_is_an_error(tmp_path, capsys, data, objective, message):
    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE TABLE t (id INTEGER, name VARCHAR, g DOUBLE PRECISION, w DOUBLE PRECISION);\n"
        f"INSERT INTO t VALUES {data}, (2, 'b', 2, 4);\n"
        f"SELECT * FROM t TO MAXIMIZE {objective} CONSTRAINT x <= 1\n"
        'WITH variables = "x(id)", var_type = "Binary" INTO o;\n'
    )
    status, err = run(tmp_path, url, program, capsys)
    assert status == 1 and message in err, err


def test_a_column_outside_sum_must_be_one_value_in_each_group(tmp_path, capsys):
    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE TABLE {t} (id INTEGER, g VARCHAR, cap DOUBLE PRECISION, w DOUBLE PRECISION);\n"
        "INSERT INTO {t} VALUES (1, 'a', 5, 1), (2, 'a', {cap}, 2), (3, 'b', 7, 3);\n"
        "SELECT * FROM {t} TO MAXIMIZE SUM(w * x)\n"
        "CONSTRAINT SUM(x) <= cap GROUP BY g\n"
        'WITH variables = "x(id)", var_type = "NonNegativeIntegers" INTO o;\n'
    )
    status, err = run(tmp_path, url, program.format(t="t", cap=6), capsys)
    assert status == 1
    assert ":4:22: error: column cap takes several values in one group (5 and 6)" in err, err
    status, err = run(tmp_path, url, program.format(t="t2", cap=5), capsys)
    assert status == 0, err
    assert rows(url, "SELECT id, x FROM o ORDER BY id") == [(1, 0), (2, 5), (3, 7)]


def test_a_time_limit_without_a_solution_is_an_error(tmp_path, capsys):
    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE OR REPLACE TABLE items AS SELECT i AS id, 10 + (i * 37) % 90 AS w, "
        "10 + (i * 53) % 97 AS v FROM range(300) t(i);\n"
        "SELECT * FROM items TO MAXIMIZE SUM(v * x) CONSTRAINT SUM(w * x) <= 5000\n"
        'WITH variables = "x(id)", var_type = "Binary", solver.time_limit = 0.000001 INTO o;\n'
    )
    status, err = run(tmp_path, url, program, capsys)
    assert status == 1
    assert "the solver found no solution in solver.time_limit" in err, err
    status, err = run(tmp_path, url, program.replace("0.000001", "60"), capsys)
    assert status == 0 and "(optimal;" in err, err


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
@pytest.mark.parametrize(
    ("objective", "constraint"),
    [
        ("SUM(x / 0)", "x <= 1"),
        ("SUM(w * x)", "x / (1 - 1) <= 1"),
        ("SUM(x * 1e308 * 10)", "x <= 1"),
    ],
)
def test_arithmetic_errors_are_one_error_and_write_nothing(
    tmp_path, capsys, unique_name, kind, objective, constraint
):
    url = datasource_url(kind, tmp_path)
    data = (
        f"CREATE TABLE {unique_name} (id INTEGER, w DOUBLE PRECISION);\n"
        f"INSERT INTO {unique_name} VALUES (1, 2), (2, 3);\n"
    )
    program = (
        f"SELECT * FROM {unique_name} TO MAXIMIZE {objective} CONSTRAINT {constraint}\n"
        f'WITH variables = "x(id)", var_type = "Binary" INTO {unique_name}_out;\n'
    )
    try:
        assert run(tmp_path, url, data, capsys)[0] == 0
        status, err = run(tmp_path, url, program, capsys)
        assert status == 1, err
        assert err.count("error:") == 1 and "internal error" not in err, err
        assert "divides by zero" in err or "overflows" in err, err
        assert "Traceback" not in err
        assert rows(url, f"SELECT COUNT(*) FROM {unique_name}") == [(2,)]
        ds = connect(url)
        try:
            assert not ds.table_exists([f"{unique_name}_out"])
        finally:
            ds.close()
    finally:
        ds = connect(url)
        try:
            ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        finally:
            ds.close()


def test_a_number_divided_by_zero_at_run_time_is_a_check_error():
    """Past ``sqlml check`` (a program lowered before the check knew literal zeros): numbers
    divide as numpy's, and the infinite coefficient is one error at the expression."""
    from dataclasses import replace

    import numpy as np

    from sqlml.errors import CheckError
    from sqlml.semantics.analyze import analyze
    from sqlml.statements.optimize.program import build

    [statement] = [
        s
        for s in analyze(
            parse(BASE.format(objective="SUM(x / 2)", constraint="x <= 1", attrs=ATTRS)), "duckdb"
        )
        if s.kind == "optimize"
    ]
    divided = ["/", ["variable", 2, 17], ["number", 0]]
    statement = replace(
        statement, objective={**statement.objective, "expr": ["sum", divided, 2, 13]}
    )
    columns = {"a": np.array([1, 2]), "b": np.array([1.0, 2.0]), "c": np.array([1.0, 1.0])}
    with pytest.raises(CheckError, match="divides by zero"):
        build(statement, columns)
