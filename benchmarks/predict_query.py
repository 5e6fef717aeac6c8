"""PREDICT(m) inside a query: DuckDB against XGBoost's own batch predict, PostgreSQL and
MariaDB against TO PREDICT into a table (issue 33).

Data, generated here (seeded): ``FEATURES`` DOUBLE columns of standard normal values, an id
and a 0/1 label that depends on them non-linearly, so that the trees grow to full depth. An
XGBoost binary classifier (``TREES`` trees of depth ``DEPTH``, hist) is trained by sqlml's
TO TRAIN on the first ``SAMPLE`` rows and stored in the database, as a user would.

- DuckDB (a temporary file, ``--rows``, 1,000,000 by default): ``SELECT count(*),
  sum(PREDICT_PROBA(m, '1')) FROM t`` run by sqlml (``sqlml.cli.main(['-e', ...])`` in this
  process: parse, check, load the model, PREDICT's path, the query; one row printed) against
  ``booster.inplace_predict`` of the same rows as a numpy matrix (read before, not timed),
  the booster loaded from the stored model's bytes. Target: sqlml's throughput >= 0.8x the
  baseline's. Printed too: the path PREDICT took, seen in the SQL sqlml sends to DuckDB (the
  model compiled into nested CASEs, or not).
- PostgreSQL and MariaDB (``--server-rows``, 100,000 by default): ``CREATE TABLE o AS
  SELECT id, x0, ..., PREDICT(m) AS label FROM t`` against ``SELECT id, x0, ... FROM t TO
  PREDICT o.label WITH output.replace = true USING m``, both run by sqlml in this process.

Each statement with PREDICT is also timed on no rows (``WHERE id < 0``): its cost whatever
the rows (model load, its SQL, the database's planning). For each database: the time sqlml
takes to compile the model into SQL and to render it, the expression's bytes and those of
the file ``sqlml export m f.sql --format sql`` writes.

Every result is checked: DuckDB's PREDICT_PROBA of the first ``CHECKED`` rows against
``inplace_predict``'s (largest difference printed), and each run's count and sum; on the
servers the two tables' rows (the classes that differ are counted: float32 ties). The
contenders take turns (benchmarks/rounds.py), in this process; best and median of
``--rounds``, with the load average. ``python benchmarks/predict_query.py [--databases
duckdb,postgresql,mysql] [--rows 1000000] [--server-rows 100000] [--rounds 3]`` uses
``$SQLML_TEST_POSTGRESQL`` and ``$SQLML_TEST_MYSQL``; leaves nothing behind.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rounds import Runs, taking_turns

FEATURES, TREES, DEPTH, SAMPLE = 8, 100, 6, 20_000
CHECKED = 20_000  # the DuckDB rows whose every probability is checked
TABLE, MODEL, RESULT = "sqlml_pq_bench", "sqlml_pq_bench_model", "sqlml_pq_bench_out"
COLUMNS = [f"x{i}" for i in range(FEATURES)]
URLS = {
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
TRAIN = (
    f"SELECT {', '.join(COLUMNS)}, label FROM {TABLE} WHERE id < {SAMPLE} TO TRAIN "
    f"xgboost.gbtree WITH objective = 'binary:logistic', train.num_boost_round = {TREES}, "
    f"max_depth = {DEPTH}, validation.split = 0 LABEL label INTO {MODEL};"
)


def generate(rows: int) -> dict[str, np.ndarray]:
    """The table's columns: id, the features, a label from a noisy non-linear score."""
    rng = np.random.default_rng(20261205)
    columns: dict[str, np.ndarray] = {"id": np.arange(rows, dtype=np.int64)}
    x = [rng.standard_normal(rows) for _ in range(FEATURES)]
    columns.update(zip(COLUMNS, x, strict=True))
    score = np.sin(2 * x[0]) + x[1] * x[2] + x[3] ** 2 - 1 + 0.5 * x[4] - np.abs(x[5]) * x[6]
    columns["label"] = (score + 0.3 * x[7] + rng.normal(scale=0.5, size=rows) > 0).astype(np.int64)
    return columns


def sqlml(url: str, sql: str) -> str:
    """``sqlml --format csv -e sql --datasource url`` in this process: what it printed; a
    SystemExit with its errors if it failed."""
    from sqlml.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["--format", "csv", "-e", sql, "--datasource", url])
    if status:
        raise SystemExit(f"sqlml -e {sql[:80]!r} failed:\n{err.getvalue()}")
    return out.getvalue()


def prepare(url: str, rows: int) -> None:
    """The table in the database and the model trained on its first ``SAMPLE`` rows."""
    from sqlml.datasources import connect

    source = connect(url)
    try:
        source.write_table([TABLE], generate(rows), replace=True)
    finally:
        source.close()
    sqlml(url, TRAIN)


def stored_model(url: str) -> Any:
    from sqlml.datasources import connect
    from sqlml.models.store import ModelStore

    source = connect(url)
    try:
        return ModelStore(source).load(MODEL)
    finally:
        source.close()


def booster_of(url: str) -> Any:
    """The stored model's bytes as an XGBoost booster."""
    import xgboost as xgb

    booster = xgb.Booster()
    booster.load_model(bytearray(stored_model(url).data))
    return booster


def describe(url: str, folder: Path) -> str:
    """The model's trees, and its SQL: how long sqlml takes to compile it
    (``Family.to_sql``) and to render it in the datasource's dialect, the expression's
    bytes and those of the file ``sqlml export --format sql`` writes."""
    from sqlml.datasources import connect
    from sqlml.models import family
    from sqlml.models.export import export_sql

    counts = [tree.count("leaf=") for tree in booster_of(url).get_dump()]
    stored = stored_model(url)
    source = connect(url)
    try:
        dialect, file = source.dialect, folder / f"{MODEL}.sql"
        start = time.perf_counter()
        compiled = family(stored.metadata["family"]).to_sql(stored)
        middle = time.perf_counter()
        expression = compiled.value.sql(dialect=dialect)
        end = time.perf_counter()
        export_sql(source, MODEL, file, dialect=dialect)
    finally:
        source.close()
    return (
        f"{len(counts)} trees, {sum(counts) / len(counts):.1f} leaves a tree on average; "
        f"its SQL ({dialect}): compiled in {middle - start:.2f} s, rendered in "
        f"{end - middle:.2f} s, {len(expression.encode()):,} bytes the expression, "
        f"{file.stat().st_size:,} bytes the exported file"
    )


def sent_sql(url: str, sql: str) -> list[str]:
    """The statements sqlml sends to the datasource while it runs ``sql`` (its class's
    ``execute`` watched for this run only)."""
    from sqlml.datasources import connect

    probe = connect(url)
    kind = type(probe)  # the class the run's connections are
    probe.close()
    seen: list[str] = []
    original = kind.execute

    def watched(self: Any, text: str, params: Any = ()) -> Any:
        seen.append(text)
        return original(self, text, params)

    kind.execute = watched
    try:
        sqlml(url, sql)
    finally:
        kind.execute = original
    return seen


def path_taken(seen: list[str]) -> str:
    """What PREDICT became in the SQL sent: the nested CASE of the compiled model, or not."""
    query = max((text for text in seen if TABLE in text), key=len, default="")
    if not query:
        return "not seen: no statement reading the table went through the datasource's execute"
    if "CASE" in query.upper():
        return f"compiled SQL (nested CASE): the statement sent is {len(query.encode()):,} bytes"
    return f"no CASE in the statement sent ({len(query.encode()):,} bytes): {query[:160]!r}"


def duckdb_part(folder: Path, rows: int, rounds: int) -> None:
    from sqlml.datasources import connect

    url = f"duckdb:///{folder / 'bench.duckdb'}"
    start = time.perf_counter()
    prepare(url, rows)
    booster = booster_of(url)
    source = connect(url)
    try:
        columns = source.read(f"SELECT {', '.join(COLUMNS)} FROM {TABLE} ORDER BY id")
    finally:
        source.close()
    x = np.column_stack([columns[name] for name in COLUMNS])
    print(f"duckdb: {rows:,} rows x {FEATURES} DOUBLE, model trained on {SAMPLE:,} of them in "
          f"{time.perf_counter() - start:.1f} s: {describe(url, folder)}")  # fmt: skip
    expected = booster.inplace_predict(x).astype(np.float64)
    check = f"CREATE TABLE {RESULT} AS SELECT id, PREDICT_PROBA({MODEL}, '1') AS p " \
        f"FROM {TABLE} WHERE id < {CHECKED};"  # fmt: skip
    print(f"PREDICT's path on duckdb: {path_taken(sent_sql(url, check))}")
    source = connect(url)
    try:
        found = source.read(f"SELECT p FROM {RESULT} ORDER BY id")["p"]
        source.execute(f"DROP TABLE {RESULT}")
    finally:
        source.close()
    difference = float(np.max(np.abs(found - expected[:CHECKED])))
    print(f"checked: PREDICT_PROBA of the first {len(found):,} rows against inplace_predict's, "
          f"largest difference {difference:.1e}")  # fmt: skip
    if len(found) != min(rows, CHECKED) or difference > 1e-6:
        raise SystemExit("PREDICT_PROBA differs from XGBoost's predictions")

    aggregate = f"SELECT count(*) AS n, sum(PREDICT_PROBA({MODEL}, '1')) AS p FROM {TABLE}"

    def scored(where: str, count: int, total: float) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            printed = sqlml(url, f"{aggregate}{where};")
            seconds = time.perf_counter() - start
            n, p = printed.strip().splitlines()[-1].split(",")
            if int(n) != count or abs(float(p or 0) - total) > 1e-6 * max(count, 1):
                raise SystemExit(f"sqlml's count and sum {n}, {p}: expected {count}, {total}")
            return seconds

        return run

    baseline, sqlml_name = "booster.inplace_predict (baseline)", "sqlml PREDICT_PROBA, aggregate"
    contenders: dict[str, Callable[[], float]] = {
        baseline: lambda: _seconds(lambda: booster.inplace_predict(x)),
        sqlml_name: scored("", rows, float(expected.sum())),
        "sqlml, the same on no rows (WHERE id < 0)": scored(" WHERE id < 0", 0, 0.0),
    }
    runs = taking_turns(contenders, rounds, required=contenders)
    _report(runs, rows, baseline)
    ratio = runs.best(baseline) / runs.best(sqlml_name)
    print(f"\nsqlml's throughput = {ratio:.2f}x inplace_predict's (target >= 0.8x): "
          f"{'met' if ratio >= 0.8 else 'NOT met'}\n")  # fmt: skip


def server_part(database: str, folder: Path, rows: int, rounds: int) -> None:
    url = URLS[database]
    start = time.perf_counter()
    prepare(url, rows)
    print(f"{database}: {rows:,} rows x {FEATURES} DOUBLE, model trained on {SAMPLE:,} of them "
          f"in {time.perf_counter() - start:.1f} s: {describe(url, folder)}")  # fmt: skip
    selected = ", ".join(["id", *COLUMNS])
    compiled_out, predicted_out = f"{RESULT}_sql", f"{RESULT}_to"
    create = f"CREATE TABLE {compiled_out} AS SELECT {selected}, PREDICT({MODEL}) AS label " \
        f"FROM {TABLE}"  # fmt: skip
    predict = f"SELECT {selected} FROM {TABLE} TO PREDICT {predicted_out}.label WITH " \
        f"output.replace = true USING {MODEL};"  # fmt: skip
    print(f"PREDICT's path on {database}: {path_taken(sent_sql(url, create + ' WHERE id < 0;'))}")

    def created(where: str, through: str = url) -> Callable[[], float]:
        def run() -> float:
            sqlml(url, f"DROP TABLE IF EXISTS {compiled_out};")
            return _seconds(lambda: sqlml(through, f"{create}{where};"))

        return run

    baseline, compiled_name = "TO PREDICT into a table (baseline)", "PREDICT, CREATE TABLE AS"
    contenders = {
        baseline: lambda: _seconds(lambda: sqlml(url, predict)),
        compiled_name: created(""),
        "PREDICT, the same on no rows (WHERE id < 0)": created(" WHERE id < 0"),
    }
    if database == "postgresql":  # its JIT compiles (and optimises) the huge expression
        jit_off = f"{url}{'&' if '?' in url else '?'}options=-c%20jit%3Doff"
        contenders["PREDICT, CREATE TABLE AS, jit = off (the URL's options)"] = created("", jit_off)
    try:
        runs = taking_turns(contenders, rounds, required=contenders)
        created("")()  # the table of every row again, for the check
        _compare_tables(url, compiled_out, predicted_out, rows)
    finally:
        sqlml(url, f"DROP TABLE IF EXISTS {compiled_out}; DROP TABLE IF EXISTS {predicted_out};")
    _report(runs, rows, baseline)
    ratio = runs.best(baseline) / runs.best(compiled_name)
    print(f"\nPREDICT's throughput = {ratio:.2f}x TO PREDICT's\n")


def _compare_tables(url: str, compiled_out: str, predicted_out: str, rows: int) -> None:
    """Both tables hold every row; the classes that differ (float32 ties) are counted."""
    from sqlml.datasources import connect

    source = connect(url)
    try:
        a, b = (
            source.read(f"SELECT id, label FROM {t} ORDER BY id")
            for t in (compiled_out, predicted_out)
        )
    finally:
        source.close()
    if len(a["id"]) != rows or not np.array_equal(a["id"], b["id"]):
        raise SystemExit(f"PREDICT's table and TO PREDICT's do not hold the same {rows:,} rows")
    differing = int(np.count_nonzero(a["label"] != b["label"]))
    print(f"checked: {rows:,} rows in both tables, {differing} classes differ")
    if differing > rows // 10_000:
        raise SystemExit("PREDICT's table differs from TO PREDICT's")


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _report(runs: Runs, rows: int, baseline: str) -> None:
    print(f"\n{len(runs.runs[baseline])} rounds, taking turns; {runs.load()}\n")
    print("| run | best | median | rows/s (best) | throughput / baseline (best, median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in runs.names():
        speed = f"{rows / runs.best(name):,.0f}" if "no rows" not in name else ""
        print(f"| {name} | {runs.best(name):.3f} s | {runs.median(name):.3f} s | {speed} | "
              f"{runs.ratios(baseline, name) if speed else ''} |")  # fmt: skip


def cleanup(url: str) -> None:
    sqlml(url, f"DROP MODEL IF EXISTS {MODEL}; DROP TABLE IF EXISTS {TABLE};")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="duckdb,postgresql,mysql")
    parser.add_argument("--rows", type=int, default=1_000_000, help="DuckDB's rows")
    parser.add_argument("--server-rows", type=int, default=100_000, help="PostgreSQL's, MySQL's")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    os.environ["SQLML_CACHE"] = "off"
    print(f"{len(os.sched_getaffinity(0))} cores, {TREES} trees of depth {DEPTH}\n")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for database in options.databases.split(","):
            if database == "duckdb":
                duckdb_part(folder, options.rows, options.rounds)
                continue
            try:
                server_part(database, folder, options.server_rows, options.rounds)
            finally:
                cleanup(URLS[database])


if __name__ == "__main__":
    main()
