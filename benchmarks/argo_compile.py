"""Compile a 1,000-statement program to an Argo Workflow.

Targets: under 1 s and under 1 MiB of YAML (Kubernetes stores objects in etcd, whose
limit is 1.5 MiB). The program mixes tables, XGBoost and Keras training (every tenth
training distributed, as an XGBoostJob or TFJob), predictions and queries. Reported:
IR -> YAML (dependency analysis, hera models, YAML dump), the same from the program's
text (parse and check included), and, in a fresh process, the one-off import of the
Kubeflow training SDK that the first distributed TO TRAIN pays.
Run: python benchmarks/argo_compile.py
"""

from __future__ import annotations

import subprocess
import sys

from rounds import taking_turns, timed

from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.backends.local.codegen import to_python
from sqlml.grammar import parse
from sqlml.semantics import analyze

STATEMENTS = 1_000
REPEATS = 5
_KINDS = (
    "CREATE TABLE t{i} AS SELECT a, b, c, label FROM source WHERE id % 7 = {i} % 7;",
    "SELECT a, b, c, label FROM t{j} TO TRAIN DNNClassifier WITH model.n_classes = 3,"
    " model.hidden_units = [10, 20], train.epoch = 10{dist} LABEL label INTO model_{i};",
    "SELECT * FROM t{j} TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob',"
    " max_depth = 4, train.num_boost_round = 30{dist} LABEL label INTO xgb_{i};",
    "SELECT * FROM t{j} TO PREDICT pred_{i}.label USING model_{k};",
    "SELECT label, count(*) AS n FROM pred_{k} GROUP BY label ORDER BY n DESC;",
)


def program(n: int = STATEMENTS) -> str:
    """``n`` statements; every tenth TO TRAIN asks for two workers."""
    return "\n".join(
        _KINDS[i % len(_KINDS)].format(
            i=i,
            j=i - i % len(_KINDS),
            k=max(i - 3, 0),
            dist=", train.workers = 2" if i % 50 in (1, 2) else "",
        )
        for i in range(n)
    )


def sdk_import_seconds() -> float:
    """The Kubeflow training SDK's import time, in a fresh interpreter."""
    code = "import time; t = time.perf_counter(); import kubeflow.training.models; "
    code += "print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout)  # fmt: skip


def main() -> None:
    text = program()
    statements = analyze(parse(text))
    yaml_text = to_argo_yaml(statements, "bench")  # warms the SDK import
    jobs = yaml_text.count("template: resource")
    runs = taking_turns(
        {
            "argo": timed(lambda: to_argo_yaml(statements, "bench")),
            "full": timed(lambda: to_argo_yaml(analyze(parse(text)), "bench")),
            "python": timed(lambda: to_python(statements, "bench")),
        },
        REPEATS,
    )
    size = len(yaml_text.encode())

    def times(name: str) -> str:
        return f"{runs.best(name) * 1000:.1f} / {runs.median(name) * 1000:.1f} ms"

    rows = [
        ("IR -> Argo YAML (DAG, hera models, dump)", times("argo"), "target < 1,000 ms"),
        ("text -> Argo YAML (parse and check too)", times("full"), ""),
        ("reference: IR -> Python program", times("python"), ""),
        ("YAML size", f"{size / 1024:.0f} KiB", f"target < 1,024 KiB; {jobs} Kubeflow jobs"),
        ("one-off: import of the Kubeflow SDK", f"{sdk_import_seconds() * 1000:.0f} ms",
         "fresh process; only programs with a distributed TO TRAIN"),
    ]  # fmt: skip
    print(f"{STATEMENTS} statements, {REPEATS} rounds taking turns (best / median); {runs.load()}")
    for name, value, note in rows:
        print(f"{name:<44} {value:>20}  {note}")


if __name__ == "__main__":
    main()
