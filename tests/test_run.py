"""TO RUN: a Python function, a script and (in its step's container) an image's program run on
the rows of a SELECT; the rows and what the program writes round-trip (numbers, NULLs, text)
on the four databases; a timeout, a failing program and a program writing no INTO table are
clear errors that leave the tables as they were; ``sqlml check`` never runs a program; the
Argo step of an image is valid against Argo's schemas."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from conftest import datasource_url
from conftest import fetch_rows as rows
from conftest import run_program as run

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import SqlmlError
from sqlml.grammar import parse
from sqlml.runtime.cancel import Cancelled, Token
from sqlml.runtime.context import Context
from sqlml.semantics import analyze
from sqlml.statements.run.handler import process
from sqlml.statements.run.handler import run as run_statement

GUARD = 300  # seconds a test waits for a process at most: a deadlock guard
SERVERS = ["duckdb", "sqlite", "mysql", "postgresql"]

SOURCE = """CREATE TABLE {t} (i BIGINT, f DOUBLE PRECISION, s VARCHAR(40), b BOOLEAN);
INSERT INTO {t} VALUES (1, 1.5, 'plain', TRUE), (2, NULL, NULL, FALSE),
  (-3, -0.25, 'é ü ''quoted'' "x"', TRUE), (4, 1e300, '', FALSE);
"""

FUNCTIONS = '''
import os
import subprocess
import time

import numpy as np


def same(rows):
    """The rows back, unchanged."""
    return {TABLE: rows}


def seen(rows):
    """What the function got: each column's values, as Python shows them."""
    return {SECOND: {"name": list(rows), "value": [repr(v.tolist()) for v in rows.values()]}}


def big(rows):
    return {TABLE: {"n": [2**62 + 1, None, -(2**63)]}}


def changed(rows):
    return {TABLE: {"i": [0.5], "d": ["soon"], "s": ["a"]}}


def scaled(rows, factor, label="x", flags=()):
    return {
        TABLE: {
            "i": rows["i"] * factor,
            "label": [label] * len(rows["i"]),
            "flags": [len(flags)] * len(rows["i"]),
        }
    }


def two(rows):
    return {TABLE: {"n": [len(rows["i"])]}, SECOND: {"total": [int(np.sum(rows["i"]))]}}


def seven(rows):
    return {TABLE: {"n": [7]}, SECOND: {"n": [8]}}


def only_first(rows):
    return {TABLE: {"n": [1]}}


def nothing(rows):
    return None


def credentials(rows):
    """Which database credentials the program's environment holds."""
    names = ["SQLML_DATASOURCE", "PGPASSWORD", "MYSQL_PWD"]
    return {TABLE: {"name": names, "held": [name in os.environ for name in names]}}


def broken(rows):
    print("reading", len(rows["i"]), "rows")
    return 1 / 0


def sleeper(rows):
    child = subprocess.Popen(["sleep", "60"])
    with open(PIDS, "w") as file:
        file.write(f"{os.getpid()} {child.pid}")
    time.sleep(60)
'''

SCRIPT = """import sys

from sqlml.statements.run import api

rows = api.rows()
params = api.params()
api.write(params["table"], {"arg": sys.argv[1:], "rows": [len(rows["i"])] * len(sys.argv[1:])})
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
        for suffix in ("", "_out", "_second"):
            ds.execute(f"DROP TABLE IF EXISTS {unique_name}{suffix}")
    finally:
        ds.close()


def program_folder(tmp_path: Path, t: str) -> Path:
    """The program's folder, holding the functions' module (``funcs_<t>``) and a script."""
    names = (
        f"TABLE = {t + '_out'!r}\nSECOND = {t + '_second'!r}\nPIDS = {str(tmp_path / 'pids')!r}\n"
    )
    (tmp_path / f"funcs_{t}.py").write_text(names + FUNCTIONS)
    (tmp_path / "scripts").mkdir(exist_ok=True)
    (tmp_path / "scripts" / "args.py").write_text(SCRIPT)
    return tmp_path


def test_the_rows_round_trip_through_a_function(tmp_path, url, tables, capsys):
    t = tables
    program_folder(tmp_path, t)
    text = SOURCE.format(t=t) + f"SELECT * FROM {t} TO RUN funcs_{t}.same INTO {t}_out;\n"
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    assert f"ran funcs_{t}.same on 4 rows" in err
    query = "SELECT i, f, s, b FROM {} ORDER BY i"
    before, after = rows(url, query.format(t)), rows(url, query.format(f"{t}_out"))
    assert after == before  # numbers (1e300 too), NULLs, text with quotes and accents, ''
    assert [type(row[0]) for row in after] == [int] * 4
    assert after[2][1:3] == (None, None)  # ordered by i: -3, 1, 2, 4
    assert after[0][2] == "é ü 'quoted' \"x\""
    assert after[3][2] == ""


def test_with_values_reach_a_function_typed(tmp_path, url, tables, capsys):
    t = tables
    program_folder(tmp_path, t)
    text = SOURCE.format(t=t) + (
        f"SELECT i FROM {t} TO RUN funcs_{t}.scaled "
        f"WITH factor = 3, label = 'hi', flags = [1, 2] INTO {t}_out;\n"
    )
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    found = rows(url, f"SELECT i, label, flags FROM {t}_out ORDER BY i")
    assert found == [(-9, "hi", 2), (3, "hi", 2), (6, "hi", 2), (12, "hi", 2)]


def test_a_script_gets_cmd_as_its_arguments_and_with_as_params(tmp_path, tables, capsys):
    t, url = tables, datasource_url("duckdb", tmp_path)
    program_folder(tmp_path, t)
    text = SOURCE.format(t=t) + (
        f'SELECT * FROM {t} TO RUN scripts/args.py CMD "--bins=3", "a b" '
        f"WITH table = '{t}_out' INTO {t}_out;\n"
    )
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    assert rows(url, f"SELECT arg, rows FROM {t}_out ORDER BY arg") == [
        ("--bins=3", 4),
        ("a b", 4),
    ]


@pytest.mark.parametrize("declared, held", [("", False), ("WITH run.datasource = TRUE", True)])
def test_a_program_gets_the_database_credentials_only_when_declared(
    tmp_path, tables, capsys, monkeypatch, declared, held
):
    """sqlml's environment holds the URL (an Argo step's comes from the Secret) and the
    clients' password variables; the program gets them with run.datasource = TRUE only."""
    t, url = tables, datasource_url("duckdb", tmp_path)
    program_folder(tmp_path, t)
    for name, value in (("SQLML_DATASOURCE", url), ("PGPASSWORD", "pw"), ("MYSQL_PWD", "pw")):
        monkeypatch.setenv(name, value)
    text = SOURCE.format(t=t) + f"SELECT * FROM {t} TO RUN funcs_{t}.credentials {declared} "
    status, err = run(tmp_path, url, text + f"INTO {t}_out;\n", capsys)
    assert status == 0, err
    found = rows(url, f"SELECT name, held FROM {t}_out ORDER BY name")
    assert found == [("MYSQL_PWD", held), ("PGPASSWORD", held), ("SQLML_DATASOURCE", held)]


def test_several_into_tables_appear_together(tmp_path, url, tables, capsys):
    t = tables
    program_folder(tmp_path, t)
    text = (
        SOURCE.format(t=t) + f"SELECT * FROM {t} TO RUN funcs_{t}.two INTO {t}_out, {t}_second;\n"
    )
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    assert rows(url, f"SELECT n FROM {t}_out") == [(4,)]
    assert rows(url, f"SELECT total FROM {t}_second") == [(4,)]
    assert "_torun_" not in " ".join(_table_names(url))  # no staging table left


def _table_names(url: str) -> list[str]:
    ds = connect(url)
    try:
        if url.startswith("sqlite"):
            found = ds.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            found = ds.execute("SELECT table_name FROM information_schema.tables")
        return [row[0] for row in found.rows]
    finally:
        ds.close()


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("broken", "failed (exit status 1); its last lines:"),
        ("nothing", "ended without writing the INTO table"),
        ("only_first", "ended without writing the INTO table"),
    ],
)
def test_a_failure_leaves_the_tables_as_they_were(tmp_path, url, tables, capsys, function, message):
    t = tables
    program_folder(tmp_path, t)
    into = f"INTO {t}_out, {t}_second;\n"
    text = SOURCE.format(t=t) + f"SELECT * FROM {t} TO RUN funcs_{t}.seven " + into
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    text = f"SELECT * FROM {t} TO RUN funcs_{t}.{function} " + into
    status, err = run(tmp_path, url, text, capsys)
    assert status == 1
    assert f"the program funcs_{t}.{function}" in err
    assert message in err
    if function == "broken":
        assert "ZeroDivisionError: division by zero" in err  # its last lines
        assert "reading 4 rows" in err
    assert rows(url, f"SELECT n FROM {t}_out") == [(7,)]
    assert rows(url, f"SELECT n FROM {t}_second") == [(8,)]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _gone(pid: int) -> bool:
    """Whether process ``pid`` ends (killed, it ends at once; GUARD seconds at most)."""
    deadline = time.monotonic() + GUARD
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _started(folder: Path) -> list[int] | None:
    """The pids of the sleeper and of the process it started, once it has said them."""
    said = (folder / "pids").read_text().split() if (folder / "pids").exists() else []
    return [int(pid) for pid in said] if len(said) == 2 else None


def test_a_timeout_stops_the_program_and_what_it_started(tmp_path, tables, capsys, monkeypatch):
    t, url = tables, datasource_url("duckdb", tmp_path)
    program_folder(tmp_path, t)
    setup = SOURCE.format(t=t) + f"CREATE TABLE {t}_out AS SELECT 1 AS kept;\n"
    assert run(tmp_path, url, setup, capsys)[0] == 0
    text = (
        f"SELECT * FROM {t} TO RUN funcs_{t}.sleeper WITH run.timeout = 1.5, "
        f"output.replace = true INTO {t}_out;\n"
    )
    # The program's clock: its 1.5 s are over once it has started its own process.
    clock = SimpleNamespace(monotonic=lambda: 0.0 if _started(tmp_path) is None else 60.0)
    monkeypatch.setattr(process, "time", clock)
    status, err = run(tmp_path, url, text, capsys)
    assert status == 1
    assert "ran longer than run.timeout = 1.5 s and was stopped" in err
    child, grandchild = _started(tmp_path)
    assert _gone(child) and _gone(grandchild)
    assert rows(url, f"SELECT kept FROM {t}_out") == [(1,)]


def test_a_cancelled_statement_stops_its_program(tmp_path, unique_name):
    t, url = unique_name, datasource_url("duckdb", tmp_path)
    program_folder(tmp_path, t)
    [statement] = analyze(parse(f"SELECT 1 AS i TO RUN funcs_{t}.sleeper;"))
    ds = connect(url, tmp_path)
    token = Token()

    def ctrl_c_once_started() -> None:  # the program and the process it started run
        deadline = time.monotonic() + GUARD
        while _started(tmp_path) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        token.cancel("Ctrl-C")

    threading.Thread(target=ctrl_c_once_started, daemon=True).start()
    try:
        with pytest.raises(Cancelled, match="Ctrl-C"):
            run_statement(statement, Context(ds, token))
    finally:
        ds.close()
    child, grandchild = _started(tmp_path)
    assert _gone(child) and _gone(grandchild)


def test_check_never_runs_the_program(tmp_path, unique_name):
    marker = tmp_path / "ran"
    module = tmp_path / f"effects_{unique_name}.py"
    module.write_text(f"open({str(marker)!r}, 'w').close()\n\ndef go(rows):\n    pass\n")
    program = tmp_path / "program.sql"
    program.write_text(
        f"SELECT 1 AS i TO RUN effects_{unique_name}.go;\n"
        f'SELECT 1 AS i TO RUN scripts/missing.py CMD "x";\n'
    )
    url = datasource_url("duckdb", tmp_path)
    assert main(["check", str(program), "--datasource", url]) == 0
    assert not marker.exists()
    assert main(["run", str(program), "--datasource", url]) == 1  # the script is missing
    assert marker.exists()  # the function ran, its module imported in the child only


@pytest.mark.parametrize(
    ("statement", "line", "column", "message"),
    [
        ("SELECT 1 TO RUN binning", 1, 17, "is not a Python function, a script nor an image"),
        ("SELECT 1 TO RUN a.b.c CMD 'x'", 1, 17, "a Python function takes its parameters"),
        ("SELECT 1 TO RUN a.1b", 1, 17, "each part a Python identifier"),
        ("SELECT 1 TO RUN reg/img:1\nINTO t", 2, 1, "needs CMD before INTO"),
        ("SELECT 1 TO RUN a.b INTO t, T", 1, 29, "names the table T twice"),
        ("SELECT 1 TO RUN a.b INTO sqlml_runs", 1, 26, "one of sqlml's tables"),
        ("SELECT * FROM t TO RUN a.b INTO t", 1, 33, "a table the statement reads"),
        ("SELECT 1 TO RUN a.b WITH run.timeout = 0", 1, 26, "run.timeout must be > 0"),
        ("SELECT 1 TO RUN a.b WITH run.timout = 1", 1, 26, "TO RUN has no attribute run.timout"),
        ("SELECT 1 TO RUN a.b WITH x.y = 1", 1, 26, "cannot be a keyword argument"),
        ("SELECT 1 TO RUN a.b WITH k = CHOICE(1, 2)", 1, 30, "CHOICE(...) gives candidates"),
        ('SELECT 1 TO RUN "a.b"', 1, 17, "unexpected"),
        ("SELECT 1 TO RUN x/y:1 CMD a", 1, 27, "expected a string"),
        ('SELECT 1 TO RUN x/y:1 CMD "a" INTO `t`', 1, 36, "names its tables without quotes"),
    ],
)
def test_check_places_each_mistake(statement, line, column, message):
    [error] = check_program(statement + ";", "duckdb")
    assert message in error.message
    assert (error.line, error.column) == (line, column), error.message


IMAGE = 'SELECT 1 AS i TO RUN sqlflow/runnable:v0.0.1 CMD "binning.py";\n'


def test_an_image_is_refused_locally_with_a_hint(tmp_path):
    [statement] = analyze(parse(IMAGE))
    ds = connect(datasource_url("duckdb", tmp_path))
    try:
        with pytest.raises(SqlmlError) as refused:
            run_statement(statement, Context(ds))
    finally:
        ds.close()
    assert "the local backend starts no containers" in refused.value.message
    assert "--backend argo" in (refused.value.hint or "")


def test_sqlml_run_refuses_an_image_locally(tmp_path, capsys):
    status, err = run(tmp_path, datasource_url("duckdb", tmp_path), IMAGE, capsys)
    assert status == 1
    assert "the local backend starts no containers" in err


BINNING = """import argparse

import numpy as np

from sqlml.statements.run import api

parser = argparse.ArgumentParser()
parser.add_argument("--column")
parser.add_argument("--bin_num", type=int)
args = parser.parse_args()
values = api.rows()[args.column]
edges = np.linspace(values.min(), values.max(), args.bin_num + 1)
counts, _ = np.histogram(values, edges)
api.write(api.tables()[0], {"low": edges[:-1], "high": edges[1:], "count": counts})
"""

SQLFLOW_FORM = """SELECT * FROM {t}
TO RUN sqlflow/runnable:v0.0.1
CMD "binning.py",
    "--column=f",
    "--bin_num=2"
INTO {t}_out;"""


def test_sqlflow_form_runs_its_script_in_the_image_step(tmp_path, unique_name):
    """What the Argo step runs in the image: ``python -m sqlml.runtime.step IR``, CMD's
    script found in the container's working folder."""
    t, url = unique_name, datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.execute(f"CREATE TABLE {t} AS SELECT * FROM (VALUES (0.0), (1.0), (4.0)) AS v(f)")
    ds.close()
    (tmp_path / "binning.py").write_text(BINNING)
    [statement] = analyze(parse(SQLFLOW_FORM.format(t=t) + "\n"))
    done = subprocess.run(
        [sys.executable, "-m", "sqlml.runtime.step", json.dumps(statement.to_dict())],
        cwd=tmp_path,
        env={**os.environ, "SQLML_DATASOURCE": url},
        capture_output=True,
        text=True,
        timeout=600,  # a deadlock guard
    )
    assert done.returncode == 0, done.stderr
    found = rows(url, f'SELECT low, high, "count" FROM {t}_out ORDER BY low')
    assert found == [(0.0, 2.0, 2), (2.0, 4.0, 1)]


def test_an_image_is_an_argo_step_in_that_image_valid_against_the_schemas():
    pytest.importorskip("hera.workflows.models")
    from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
    from tests.k8s_validation import validate

    text = (
        "CREATE TABLE src AS SELECT 1.0 AS f;\n"
        + SQLFLOW_FORM.format(t="src")
        + "\nSELECT * FROM src TO RUN tools.summary WITH bins = 3 INTO summary;\n"
        + "SELECT * FROM src_out;\n"
    )
    options = ArgoOptions(image="registry.example.com/sqlml:1", retries=2)
    document = yaml.safe_load(to_argo_yaml(analyze(parse(text)), "run", options))
    assert validate(document) == []
    templates = {t["name"]: t for t in document["spec"]["templates"]}
    images = {t["container"]["image"] for t in templates.values() if "container" in t}
    assert images == {"registry.example.com/sqlml:1", "sqlflow/runnable:v0.0.1"}
    image_step = next(
        t
        for t in templates.values()
        if t.get("container", {}).get("image", "").startswith("sqlflow")
    )
    env = {e["name"]: e for e in image_step["container"]["env"]}
    assert set(env) == {"SQLML_DATASOURCE", "SQLML_RUN_ID"}  # the run: the Workflow's name
    assert "secretKeyRef" in env["SQLML_DATASOURCE"]["valueFrom"]
    assert env["SQLML_RUN_ID"]["value"] == "{{workflow.name}}"
    assert image_step["retryStrategy"]["limit"] == 2
    tasks = {task["name"]: task for task in templates["main"]["dag"]["tasks"]}
    select = next(task for name, task in tasks.items() if name.startswith("s4"))
    assert select["dependencies"] == [next(n for n in tasks if n.startswith("s2"))]


TYPED = """CREATE TABLE {t} (k INTEGER, i INTEGER, n BIGINT, b BOOLEAN, d DATE, ts {timestamp},
  z {zoned}, s VARCHAR(40), f DOUBLE PRECISION, m DECIMAL(10,2));
INSERT INTO {t} VALUES (1, 7, 9007199254740991, TRUE, '2024-02-29',
  '2024-01-02 03:04:05.250000', '2024-01-02 03:04:05{zone}', 'é ''x''', 0.1, 12345678.91),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, -2147483648, -1, FALSE, '1970-01-01', '1999-12-31 23:59:59', NULL, '', -1e300, -0.05);
"""
# What the program gets, by column: NULL as None (NaN only among floats), integers exact.
SEEN = {
    "i": [7, None, -2147483648],
    "b": [True, None, False],
    "d": [datetime.date(2024, 2, 29), None, datetime.date(1970, 1, 1)],
    "ts": [
        datetime.datetime(2024, 1, 2, 3, 4, 5, 250000),
        None,
        datetime.datetime(1999, 12, 31, 23, 59, 59),
    ],
    "s": ["é 'x'", None, ""],
}


@pytest.mark.parametrize("server", SERVERS)
def test_every_type_and_its_nulls_round_trip(tmp_path, capsys, unique_name, server):
    """Integers and booleans with NULLs, dates, timestamps, text, floats and decimals: the
    program sees values and NULLs as they are, and the columns it returns unchanged come
    back with the SELECT's types and values."""
    t, url = unique_name, datasource_url(server, tmp_path)
    program_folder(tmp_path, t)
    mysql = server == "mysql"  # whose TIMESTAMP has no time zone
    timestamp, zoned = ("DATETIME(6)", "TIMESTAMP NULL") if mysql else ("TIMESTAMP", "TIMESTAMPTZ")
    zone = "" if mysql else "+00:00"
    select = f"SELECT * FROM {t} ORDER BY k"
    text = TYPED.format(t=t, timestamp=timestamp, zoned=zoned, zone=zone) + (
        f"{select} TO RUN funcs_{t}.same INTO {t}_out;\n"
        f"{select} TO RUN funcs_{t}.seen INTO {t}_second;\n"
    )
    try:
        status, err = run(tmp_path, url, text, capsys)
        assert status == 0, err
        ds = connect(url)
        try:
            source = ds.result_types(f"SELECT * FROM {t}")
            assert ds.result_types(f"SELECT * FROM {t}_out") == source
            assert source["b"].lower() in ("boolean", "bool", "tinyint(1)")
            before = ds.execute(f"SELECT * FROM {t} ORDER BY k").rows
            after = ds.execute(f"SELECT * FROM {t}_out ORDER BY k").rows
            seen = dict(ds.execute(f"SELECT name, value FROM {t}_second").rows)
        finally:
            ds.close()
        assert [tuple(row) for row in after] == [tuple(row) for row in before]
        assert tuple(after[1][1:]) == (None,) * 9
        for name, values in SEEN.items():
            assert seen[name] == repr(values), name
        utc = None if mysql else datetime.UTC
        assert seen["z"] == repr([datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=utc), None, None])
    finally:
        ds = connect(url)
        try:
            for suffix in ("", "_out", "_second"):
                ds.execute(f"DROP TABLE IF EXISTS {t}{suffix}")
        finally:
            ds.close()


def test_big_integers_a_program_returns_with_nulls_are_written_exactly(
    tmp_path, url, tables, capsys
):
    t = tables
    program_folder(tmp_path, t)
    text = (
        f"CREATE TABLE {t} (n BIGINT);\nINSERT INTO {t} VALUES (1);\n"
        f"SELECT n FROM {t} TO RUN funcs_{t}.big INTO {t}_out;\n"
    )
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    assert sorted(rows(url, f"SELECT n FROM {t}_out"), key=str) == [
        (-(2**63),),
        (2**62 + 1,),
        (None,),
    ]
    ds = connect(url)
    try:
        assert ds.result_types(f"SELECT * FROM {t}_out") == ds.result_types(f"SELECT * FROM {t}")
    finally:
        ds.close()


def test_values_a_select_type_cannot_hold_get_their_own(tmp_path, capsys, unique_name):
    """A returned column of a SELECT column's name whose values that column's type cannot
    hold is written with the type its values need."""
    t, url = unique_name, datasource_url("duckdb", tmp_path)
    program_folder(tmp_path, t)
    text = (
        f"CREATE TABLE {t} (i INTEGER, d DATE, s VARCHAR(2));\n"
        f"INSERT INTO {t} VALUES (1, DATE '2024-01-02', 'ab');\n"
        f"SELECT * FROM {t} TO RUN funcs_{t}.changed INTO {t}_out;\n"
    )
    assert run(tmp_path, url, text, capsys)[0] == 0
    ds = connect(url)
    try:
        types = ds.result_types(f"SELECT * FROM {t}_out")
        assert types == {"i": "DOUBLE", "d": "VARCHAR", "s": "VARCHAR"}
        assert ds.execute(f"SELECT * FROM {t}_out").rows == [(0.5, "soon", "a")]
    finally:
        ds.close()


def test_the_parquet_exchange_keeps_every_value(tmp_path):
    """What the program gets and gives back: one Parquet file each way, through DuckDB."""
    from sqlml.statements.run.api import as_array, read_columns, write_columns

    columns = {
        "i": np.array([1, -(2**62), 0]),
        "f": np.array([0.1, np.nan, -1e-300]),
        "s": as_array(["é\n'\"", None, ""]),
        "b": np.array([True, False, True]),
        "blob": as_array([b"\x00\xff", None, b""]),
        "d": as_array([datetime.date(2024, 2, 29), None, datetime.date(1, 1, 1)]),
        "n": as_array([None, None, None]),
    }
    write_columns(columns, tmp_path / "rows.parquet")
    back = read_columns(tmp_path / "rows.parquet")
    assert list(back) == list(columns)
    for name, values in columns.items():
        assert back[name].dtype == values.dtype, name
        assert back[name].tolist() == values.tolist() or name == "f", name
    assert np.array_equal(back["f"], columns["f"], equal_nan=True)


def test_the_api_a_program_uses(tmp_path, monkeypatch):
    from sqlml.statements.run import api

    api.write_columns({"x": np.array([3, 1, 2])}, tmp_path / "rows.parquet")
    (tmp_path / "out").mkdir()
    spec = {"input": str(tmp_path / "rows.parquet"), "output": str(tmp_path / "out")}
    spec |= {"params": {"k": 2, "names": ["a"]}, "tables": ["db.Result"], "select": "..."}
    (tmp_path / "run.json").write_text(json.dumps(spec))
    monkeypatch.setenv(api.SPEC_ENV, str(tmp_path / "run.json"))
    api.spec.cache_clear()
    try:
        assert api.rows()["x"].tolist() == [3, 1, 2]
        assert api.relation().order("x").fetchall() == [(1,), (2,), (3,)]
        assert api.params() == {"k": 2, "names": ["a"]}
        assert api.tables() == ["db.Result"]
        api.write("DB.result", {"y": [1.5, None], "z": ["a", None]})
        assert api.read_columns(api.output_file(tmp_path / "out", 0))["z"].tolist() == ["a", None]
        with pytest.raises(api.RunError, match=r"the statement's INTO names db\.Result"):
            api.write("other", {"y": [1]})
        with pytest.raises(api.RunError, match="as many rows each"):
            api.write("db.result", {"y": [1], "z": [1, 2]})
    finally:
        api.spec.cache_clear()


def test_the_programs_output_is_in_the_step_log(tmp_path, capsys, unique_name):
    t, url = unique_name, datasource_url("duckdb", tmp_path)
    (tmp_path / "talk.py").write_text(
        "from sqlml.statements.run import api\n"
        "print('hello from the program', len(api.rows()['i']), flush=True)\n"
        "api.write(api.params()['table'], {'n': [1]})\n"
    )
    text = (
        SOURCE.format(t=t)
        + f"SELECT * FROM {t} TO RUN talk.py WITH table = '{t}_out' INTO {t}_out;\n"
    )
    status, err = run(tmp_path, url, text, capsys)
    assert status == 0, err
    assert "hello from the program 4" in err  # on standard error, as it runs
    logs = Path(re.search(r"logs in (\S+)", err).group(1))
    step_logs = "".join(path.read_text() for path in logs.glob("*.log"))
    assert "hello from the program 4" in step_logs


def test_several_into_tables_change_all_or_none_on_every_database(datasource, unique_name):
    """The second target refuses to be replaced (a table of the user's): the first, which a
    swap of its own would have replaced already (MySQL commits each DDL statement), stays."""
    from sqlml.errors import CheckError
    from sqlml.runtime.cancel import Token
    from sqlml.statements.run.handler.into import write_tables

    first, second = [f"{unique_name}_a"], [f"{unique_name}_b"]
    datasource.write_table(first, {"n": np.array([1])})  # written by sqlml: replaceable
    datasource.execute(f"CREATE TABLE {datasource.quote(second)} (n INTEGER)")
    outputs = [(first, {"n": np.array([2])}, {}), (second, {"n": np.array([3])}, {})]
    try:
        with pytest.raises(CheckError, match="sqlml did not write it"):
            write_tables(datasource, outputs, False, Token())
        assert datasource.read(f"SELECT n FROM {datasource.quote(first)}")["n"].tolist() == [1]
        assert len(datasource.read(f"SELECT n FROM {datasource.quote(second)}")["n"]) == 0
        names = datasource.execute(
            "SELECT name FROM sqlite_master"
            if datasource.dialect == "sqlite"
            else "SELECT table_name FROM information_schema.tables"
        )
        assert not [name for (name,) in names.rows if "_torun_" in name and unique_name in name]
        write_tables(datasource, outputs, True, Token())  # output.replace: both, together
        assert datasource.read(f"SELECT n FROM {datasource.quote(first)}")["n"].tolist() == [2]
        assert datasource.read(f"SELECT n FROM {datasource.quote(second)}")["n"].tolist() == [3]
    finally:
        for table in (first, second):
            datasource.execute(f"DROP TABLE IF EXISTS {datasource.quote(table)}")
