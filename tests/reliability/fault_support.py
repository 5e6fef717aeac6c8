"""What the fault and concurrency tests share: their data, programs, child processes and
checks of what the database holds afterwards."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import xgboost as xgb

from sqlml.backends.local.record import STEPS
from sqlml.cli import main
from sqlml.datasources import Datasource, connect
from sqlml.models.store import CHUNKS, TABLE, ModelStore

FEATURES = ["x1", "x2", "x3", "x4"]
WAIT = 300.0  # seconds a test waits at most for a child process: a deadlock guard


def rows(count: int, seed: int, first_id: int = 0) -> dict[str, np.ndarray]:
    """``count`` rows: an id, four features and a label (0, 1 or 2) that they determine."""
    rng = np.random.default_rng(seed)
    columns = {"id": np.arange(first_id, first_id + count)}
    columns |= {name: rng.uniform(0, 10, count) for name in FEATURES}
    columns["y"] = (columns["x1"] + columns["x2"] > 10).astype(np.int64) + (columns["x3"] > 7)
    return columns


def write(url: str, table: str, columns: dict[str, np.ndarray]) -> None:
    ds = connect(url)
    try:
        ds.write_table([table], columns)
    finally:
        ds.close()


def train_sql(table: str, model: str, rounds: int) -> str:
    return (
        f"SELECT {', '.join(FEATURES)}, y FROM {table} TO TRAIN xgboost.gbtree "
        f'WITH objective = "multi:softprob", max_depth = 3, train.num_boost_round = {rounds} '
        f"LABEL y INTO {model};\n"
    )


def predict_sql(source: str, table: str, model: str, tag: int) -> str:
    """Predict ``source``'s rows into ``table``, with a column ``tag`` that tells who wrote them."""
    return (
        f"SELECT id, {tag} AS tag, {', '.join(FEATURES)} FROM {source} "
        f"TO PREDICT {table}.y USING {model};\n"
    )


def run(args: list[str], capsys) -> tuple[int, str]:
    """``sqlml ARGS`` in this process: the exit status and what it wrote to stderr."""
    status = main(args)
    return status, capsys.readouterr().err


def run_id(stderr: str) -> str:
    """The run id a ``sqlml run`` announced."""
    found = re.search(r"sqlml: run ([\w-]+)", stderr)
    assert found, stderr
    return found.group(1)


def step_records(url: str, run: str) -> dict[str, tuple[str, int, str | None]]:
    """Each recorded step of ``run``: its state, attempts and error."""
    ds = connect(url)
    try:
        found = ds.execute(
            f"SELECT step, state, attempts, error FROM {STEPS} WHERE run_id = {ds.param}", [run]
        )
    finally:
        ds.close()
    return {step: (state, int(attempts), error) for step, state, attempts, error in found.rows}


def model_versions(url: str, model: str) -> dict[int, int]:
    """Each stored version of ``model`` and its boosting rounds, after checking that the
    version is whole: its chunks hold exactly the booster its metadata describes."""
    ds = connect(url)
    try:
        store = ModelStore(ds)
        versions = {}
        for version in store.list_versions(model):
            stored = store.load(model, version)
            booster = xgb.Booster(model_file=bytearray(stored.data))
            rounds = stored.metadata["attributes"]["train.num_boost_round"]
            assert booster.num_boosted_rounds() == rounds
            versions[version] = rounds
        orphans = ds.execute(
            f"SELECT COUNT(*) FROM {CHUNKS} WHERE name = {ds.param} AND version NOT IN "
            f"(SELECT version FROM {TABLE} WHERE name = {ds.param})",
            [model, model],
        )
        assert orphans.rows[0][0] == 0, "chunks of a version that was never saved"
        return versions
    finally:
        ds.close()


def table_rows(url: str, table: str) -> list[tuple]:
    ds = connect(url)
    try:
        return [tuple(row) for row in ds.execute(f"SELECT * FROM {table} ORDER BY id").rows]
    finally:
        ds.close()


def tables_like(url: str, prefix: str) -> list[str]:
    ds = connect(url)
    try:
        return [name for name in all_tables(ds) if name.startswith(prefix)]
    finally:
        ds.close()


def all_tables(ds: Datasource) -> list[str]:
    if ds.dialect == "sqlite":
        return [row[0] for row in ds.execute("SELECT name FROM sqlite_master").rows]
    found = ds.execute(
        f"SELECT table_name FROM information_schema.tables WHERE table_schema = {ds.current_schema}"
    )
    return [row[0] for row in found.rows]


def drop(url: str, tables: list[str], models: list[str]) -> None:
    """Drop what a test made (and the staging tables of its tables)."""
    ds = connect(url)
    try:
        names = set(tables)
        for table in tables:
            names.update(t for t in all_tables(ds) if t.startswith(f"{table}__sqlml"))
        for name in names:
            ds.execute(f"DROP TABLE IF EXISTS {ds.quote([name])}")
        for model in models:
            ModelStore(ds).drop(model)
    finally:
        ds.close()


class Child:
    """``sqlml`` in a child process, run by ``script`` (Python) with ``args`` as sys.argv[1:]."""

    def __init__(self, script: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "SQLML_CACHE": "off", **(env or {})},
        )

    def wait_for(self, line: str) -> None:
        """Wait until the child prints ``line`` (a failure if it ends or WAIT passes first)."""
        ready, _, _ = select.select([self.process.stdout], [], [], WAIT)
        got = self.process.stdout.readline() if ready else ""
        if got.strip() != line:
            self.kill()
            raise AssertionError(f"child printed {got!r}, not {line!r}: {self.finish()[1]}")

    def finish(self) -> tuple[int, str]:
        """Wait for the child's end: its exit status and stderr."""
        try:
            _, err = self.process.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()


def release(folder: Path, name: str) -> None:
    """Let children waiting for the file ``name`` in ``folder`` go on."""
    (folder / name).touch()
