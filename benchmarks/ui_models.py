"""sqlml ui's models pages on a store of 1,000 versions (issue 19: a page loads in under 300 ms).

Stores, each on DuckDB, SQLite and (when its server answers) PostgreSQL: ``models``, 1,000
models of one version; ``versions``, one model of 1,000 versions (a store keeps 3 per model:
these rows are inserted as the store writes them). Each holds the metadata of a real XGBoost
model trained on iris (about 2 KB of JSON) and a run record of 5,000 steps. Pages: the list of
models, a model's page (every version listed) and the comparison of two versions, requested
through Starlette's TestClient (the application's own time, without a network), the pages
taking turns (benchmarks/rounds.py: A B C, C B A ...); the two lists also "cold": with the
fields the pages keep of the versions they have seen forgotten first (a server's first page).
Best and median of REPEATS, with the load average.
Run: python benchmarks/ui_models.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rounds import Runs, taking_turns
from starlette.testclient import TestClient

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import DatasourceError
from sqlml.models.store import ModelStore
from sqlml.tables import MODEL_VERSIONS, RUN_STEPS
from sqlml.ui import model_catalog
from sqlml.ui.server import Settings, create_app

COUNT = 1_000
STEPS = 5_000
REPEATS = 15
POSTGRESQL = os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test")
TRAIN = (
    "CREATE TABLE iris AS SELECT * FROM (VALUES (5.1, 3.5, 0), (4.9, 3.0, 0), (6.2, 3.4, 2), "
    "(5.9, 3.0, 2), (5.5, 2.3, 1), (6.5, 2.8, 1)) AS t(a, b, class);"
    "SELECT * FROM iris TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', "
    "train.num_boost_round = 2, validation.select = 'SELECT * FROM iris' LABEL class INTO m;"
)


def real_metadata(folder: Path) -> str:
    """The metadata JSON of a model sqlml trained."""
    url = f"duckdb:///{folder / 'trained.duckdb'}"
    assert main(["-e", TRAIN, "--datasource", url]) == 0
    ds = connect(url)
    try:
        return json.dumps(ModelStore(ds).load("m").metadata, sort_keys=True)
    finally:
        ds.close()


def fill(url: str, metadata: str) -> None:
    """Both stores in the datasource at ``url`` (their tables made by the store and the run
    record), and the run record's steps."""
    ds = connect(url)
    try:
        for table in (MODEL_VERSIONS, RUN_STEPS, "sqlml_model_chunks", "sqlml_runs"):
            ds.execute(f"DROP TABLE IF EXISTS {table}")
        ModelStore(ds).save("seed", json.loads(metadata), b"")
        ds.execute(f"DELETE FROM {MODEL_VERSIONS}")
        rows = [(f"model_{i:04d}", 1, 1, metadata) for i in range(COUNT)]
        rows += [("many", v, 1, metadata) for v in range(1, COUNT + 1)]
        p = ds.param
        with ds.transaction():
            for row in rows:
                ds.execute(
                    f"INSERT INTO {MODEL_VERSIONS} (name, version, size, metadata) "
                    f"VALUES ({p}, {p}, {p}, {p})",
                    list(row),
                )
        from sqlml.backends.local.record import RunRecord

        RunRecord(ds)  # makes the record's tables
        with ds.transaction():
            for i in range(STEPS):
                ds.execute(
                    f"INSERT INTO {RUN_STEPS} (run_id, step, state, ended_at) "
                    f"VALUES ({p}, {p}, 'succeeded', {p})",
                    [f"run-{i // 5}", f"s{i % 5}-train-model-{i % 997}", float(i)],
                )
    finally:
        ds.close()


def measure(url: str, folder: Path) -> Runs:
    """Each page's time, REPEATS rounds, the pages taking turns (benchmarks/rounds.py)."""
    client = TestClient(create_app(Settings(url, folder / "runs", folder)))
    pages = {
        "list of 1,000 models": "/models",
        "list of 1,000 models, cold": "/models",
        "model of 1,000 versions": "/models/many",
        "model of 1,000 versions, cold": "/models/many",
        "compare 2 of 1,000 versions": "/models/many/compare?a=1&b=1000",
    }
    for address in pages.values():  # warm up: imports, template compilation
        assert client.get(address).status_code == 200

    def get(name: str) -> Callable[[], float]:
        def run() -> float:
            if name.endswith("cold"):
                model_catalog._listed.clear()
            started = time.perf_counter()
            response = client.get(pages[name])
            seconds = time.perf_counter() - started
            assert response.status_code == 200, name
            return seconds

        return run

    return taking_turns({name: get(name) for name in pages}, REPEATS, required=pages)


def main_benchmark() -> None:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        metadata = real_metadata(folder)
        print(f"metadata: {len(metadata):,} characters a version")
        urls = {
            "duckdb": f"duckdb:///{folder / 'store.duckdb'}",
            "sqlite": f"sqlite:///{folder / 'store.db'}",
            "postgresql": POSTGRESQL,
        }
        for kind, url in urls.items():
            try:
                fill(url, metadata)
            except DatasourceError as error:
                print(f"{kind}: skipped ({error.message})")
                continue
            runs = measure(url, folder)
            print(f"{kind}: {REPEATS} rounds, {runs.load()}")
            for name in runs.names():
                best, median = runs.best(name) * 1000, runs.median(name) * 1000
                print(f"{kind:10} {name:30} best {best:6.1f} ms   median {median:6.1f} ms")


if __name__ == "__main__":
    main_benchmark()
