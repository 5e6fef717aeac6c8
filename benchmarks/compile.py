"""Parse, check and compile a 1,000-statement program.

Targets: parse alone >= 5,000 statements/s; parse + check + compile < 1 s in all.
Baseline, measured in the same run: sqlglot parsing the program's standard SQL alone
(the statements without their extended clauses), so the ratio shows what the extended
grammar and the checks add. Run: python benchmarks/compile.py
"""

from __future__ import annotations

import sqlglot
from rounds import Runs, taking_turns, timed

from sqlml.backends.local.codegen import to_python
from sqlml.grammar import parse
from sqlml.plan import dependencies
from sqlml.semantics import analyze

STATEMENTS = 1_000
REPEATS = 5


def program(n: int = STATEMENTS) -> str:
    """A program of ``n`` statements cycling through tables, training, prediction, queries."""
    kinds = [
        "CREATE TABLE t{i} AS SELECT a, b, c, label FROM source WHERE id % 7 = {i} % 7;",
        "SELECT a, b, c, label FROM t{j} WHERE a > 0.5\n"
        "TO TRAIN DNNClassifier WITH model.n_classes = 3, model.hidden_units = [10, 20],\n"
        "  train.epoch = 10, optimizer.learning_rate = 0.01\n"
        "COLUMN a, b, c LABEL label INTO model_{i};",
        "SELECT * FROM t{j} TO TRAIN xgboost.gbtree\n"
        'WITH objective = "multi:softprob", eta = 0.3, max_depth = 4, train.num_boost_round = 30\n'
        "LABEL label INTO xgb_{i};",
        "SELECT * FROM t{j} TO PREDICT pred_{i}.label USING model_{k};",
        "SELECT label, count(*) AS n FROM pred_{k} GROUP BY label ORDER BY n DESC;",
    ]
    return "\n".join(
        kinds[i % len(kinds)].format(i=i, j=i - i % len(kinds), k=max(i - 3, 0)) for i in range(n)
    )


def main() -> None:
    text = program()
    parsed = parse(text)
    statements = analyze(parsed)
    standard_sql = [getattr(s, "select", None) or s.text for s in parsed.statements]

    runs = taking_turns(
        {
            "baseline": timed(
                lambda: [sqlglot.parse_one(sql, read="duckdb") for sql in standard_sql]
            ),
            "parse": timed(lambda: parse(text)),
            "parse + check": timed(lambda: analyze(parse(text))),
            "dag": timed(lambda: dependencies(statements, "duckdb")),
            "compile": timed(lambda: to_python(statements, "bench")),
        },
        REPEATS,
    )
    print(f"{STATEMENTS} statements, {REPEATS} rounds taking turns; {runs.load()}")
    print(f"{'':<48} {'best':>8}    {'median':>8}")
    for name, seconds, median, note in rows(runs):
        print(f"{name:<48} {seconds * 1000:8.1f} ms {median * 1000:8.1f} ms  {note}")


def rows(runs: Runs) -> list[tuple[str, float, float, str]]:
    """The table's rows: step, best, median, note. The check is parse + check less parse;
    compiling runs the analysis itself."""
    best = {name: runs.best(name) for name in runs.names()}
    median = {name: runs.median(name) for name in runs.names()}
    check = best["parse + check"] - best["parse"]
    check_median = median["parse + check"] - median["parse"]
    total = best["parse"] + check + best["compile"]
    total_median = median["parse"] + check_median + median["compile"]
    return [
        ("baseline: sqlglot parse of the standard SQL", best["baseline"], median["baseline"], ""),
        ("sqlml parse", best["parse"], median["parse"],
         f"{STATEMENTS / best['parse']:,.0f} statements/s; target >= 5,000"),
        ("sqlml check (estimators, attributes, sqlglot)", check, check_median, ""),
        ("sqlml dependency analysis (sqlglot lineage)", best["dag"], median["dag"],
         "part of the compile"),
        ("sqlml compile to Python (its DAG included)", best["compile"], median["compile"], ""),
        ("total parse + check + compile", total, total_median,
         f"target < 1,000 ms; {total / best['baseline']:.2f}x the baseline"),
    ]  # fmt: skip


if __name__ == "__main__":
    main()
