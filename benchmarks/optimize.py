"""TO MINIMIZE of a 100,000-variable transportation problem against the same model built and
solved directly with SciPy's HiGHS.

Data, generated here (seeded), in a DuckDB file: 100 plants (capacity) and 1,000 markets
(demand), every route between them (100,000 rows: plants, markets, distance, capacity,
demand); the plants can supply 1.2 times the demand. The problem: ship an integer amount on
each route, at most each plant's capacity and at least each market's demand, at the least
total distance (an assignment-style program: 100,000 integer variables, 1,100 constraints).

- sqlml: the statement, run by its handler in this process: read the rows, build the program
  (numpy, scipy.sparse), solve it (scipy.optimize.milp), write the rows and the solution into
  a table through a staging table swapped in;
- baseline: what a user would write with the solver: DuckDB's ``fetchnumpy`` of the same
  SELECT, the two constraint blocks built by hand with scipy.sparse, ``milp``; nothing written.

Each side runs REPEATS times, taking turns (A B, B A, ...: benchmarks/rounds.py); best and
median with the load average. Both optima must agree. Target: sqlml <= 1.3x the baseline.
``python benchmarks/optimize.py``; leaves nothing behind.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
from rounds import taking_turns, timed
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze
from sqlml.statements.optimize.program import build

PLANTS, MARKETS = 100, 1_000
REPEATS = 3
SELECT = "SELECT plants, markets, distance, capacity, demand FROM routes"
STATEMENT = f"""{SELECT}
TO MINIMIZE SUM(shipment * distance)
CONSTRAINT SUM(shipment) <= capacity GROUP BY plants,
           SUM(shipment) >= demand GROUP BY markets
WITH variables = "shipment(plants, markets)", var_type = "NonNegativeIntegers"
INTO shipment_plan;
"""


def load(path: Path) -> None:
    """The routes table: every plant with every market."""
    rng = np.random.default_rng(16)
    demand = rng.integers(10, 100, MARKETS)
    capacity = rng.multinomial(int(demand.sum() * 1.2), np.full(PLANTS, 1 / PLANTS))
    plant, market = np.divmod(np.arange(PLANTS * MARKETS), MARKETS)
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE routes AS SELECT 'plant' || lpad(p::VARCHAR, 3, '0') AS plants, "
        "'market' || lpad(m::VARCHAR, 4, '0') AS markets, d::DOUBLE AS distance, "
        "c::DOUBLE AS capacity, q::DOUBLE AS demand FROM (SELECT unnest($1) AS p, "
        "unnest($2) AS m, unnest($3) AS d, unnest($4) AS c, unnest($5) AS q)",
        [
            plant.tolist(),
            market.tolist(),
            rng.integers(1, 1_000, PLANTS * MARKETS).tolist(),
            capacity[plant].tolist(),
            demand[market].tolist(),
        ],
    )
    con.close()


def baseline(path: Path) -> float:
    """The model built and solved by hand; its optimum."""
    con = duckdb.connect(str(path), read_only=True)
    columns = con.execute(SELECT).fetchnumpy()
    con.close()
    rows = len(columns["distance"])
    _, plant_first, plant = np.unique(columns["plants"], return_index=True, return_inverse=True)
    _, market_first, market = np.unique(columns["markets"], return_index=True, return_inverse=True)
    ones, index = np.ones(rows), np.arange(rows)
    matrix = sparse.vstack(
        [
            sparse.csr_matrix((ones, (plant, index)), shape=(len(plant_first), rows)),
            sparse.csr_matrix((ones, (market, index)), shape=(len(market_first), rows)),
        ],
        format="csr",
    )
    capacity = np.asarray(columns["capacity"], dtype=np.float64)[plant_first]
    demand = np.asarray(columns["demand"], dtype=np.float64)[market_first]
    low = np.concatenate([np.full(len(capacity), -np.inf), demand])
    high = np.concatenate([capacity, np.full(len(demand), np.inf)])
    cost = np.asarray(columns["distance"], dtype=np.float64)
    found = milp(
        cost,
        integrality=np.ones(rows),
        bounds=Bounds(0, np.inf),
        constraints=[LinearConstraint(matrix, low, high)],
    )
    assert found.status == 0, found.message
    return float(cost @ np.rint(found.x))


def with_sqlml(url: str) -> float:
    """The statement, run by its handler; its optimum (from the summary)."""
    (statement,) = analyze(parse(STATEMENT))
    ds = connect(url)
    try:
        summary = execute(statement, ds).summary or ""
        [(rows,)] = ds.execute("SELECT count(*) FROM shipment_plan").rows
    finally:
        ds.close()
    assert rows == PLANTS * MARKETS, rows
    return float(summary.split(" = ")[1].split()[0])


def read_for_build(url: str) -> tuple[object, dict]:
    """The statement and the columns it reads, for timing the program's construction."""
    (statement,) = analyze(parse(STATEMENT))
    ds = connect(url)
    columns = ds.read(statement.select)
    ds.close()
    return statement, columns


def build_by_hand(columns: dict) -> None:
    """The two constraint blocks built by hand, as ``baseline`` builds them."""
    rows = len(columns["distance"])
    _, first, plant = np.unique(columns["plants"], return_index=True, return_inverse=True)
    _, second, market = np.unique(columns["markets"], return_index=True, return_inverse=True)
    ones, index = np.ones(rows), np.arange(rows)
    sparse.vstack(
        [
            sparse.csr_matrix((ones, (plant, index)), shape=(len(first), rows)),
            sparse.csr_matrix((ones, (market, index)), shape=(len(second), rows)),
        ],
        format="csr",
    )


def timed_optimum(run) -> dict[str, float]:
    start = time.perf_counter()
    optimum = run()
    return {"seconds": time.perf_counter() - start, "optimum": optimum}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "routes.duckdb"
        load(path)
        url = f"duckdb:///{path}"
        runs = taking_turns(
            {
                "sqlml": lambda: timed_optimum(lambda: with_sqlml(url)),
                "baseline": lambda: timed_optimum(lambda: baseline(path)),
            },
            REPEATS,
        )
        statement, columns = read_for_build(url)
        builds = taking_turns(
            {
                "sqlml": timed(lambda: build(statement, columns)),
                "by hand": timed(lambda: build_by_hand(columns)),
            },
            REPEATS,
        )
    optima = {name: runs.largest(name, "optimum") for name in runs.names()}
    assert optima["sqlml"] == optima["baseline"] == runs.best("sqlml", "optimum"), optima
    ours, theirs = runs.best("sqlml"), runs.best("baseline")
    print(f"variables: {PLANTS * MARKETS:,}; optimum: {optima['sqlml']:,.0f} (both)")
    print(f"{REPEATS} rounds taking turns; {runs.load()}")
    print("| step | best | median | note |\n| --- | ---: | ---: | --- |")
    print(
        f"| baseline: DuckDB fetchnumpy, sparse matrices by hand, milp | {theirs:.2f} s "
        f"| {runs.median('baseline'):.2f} s | |"
    )
    print(
        f"| sqlml: TO MINIMIZE (read, build, solve, write {PLANTS * MARKETS:,} rows) | "
        f"{ours:.2f} s | {runs.median('sqlml'):.2f} s | {runs.ratios('sqlml', 'baseline')} the "
        "baseline (best, median; target <= 1.3x) |"
    )
    print(
        f"| the program's construction alone: sqlml / by hand | "
        f"{builds.best('sqlml') * 1000:.0f} ms / {builds.best('by hand') * 1000:.0f} ms | "
        f"{builds.median('sqlml') * 1000:.0f} ms / {builds.median('by hand') * 1000:.0f} ms | |"
    )


if __name__ == "__main__":
    main()
