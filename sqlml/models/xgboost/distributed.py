"""TO TRAIN with ``train.workers = N``: XGBoost's own collective training (its Rabit tracker
and communicator) by N processes, each holding one part of the SELECT's rows, read by
itself from the database once rank 0 has staged them (:mod:`sqlml.runtime.partitions`).

The processes follow the Kubeflow training operator's contract for an XGBoostJob's pods:
``RANK`` (0 .. N - 1), ``WORLD_SIZE`` (N), ``MASTER_ADDR`` and ``MASTER_PORT`` (where rank
0 hosts the tracker). On Kubernetes the job's Master is rank 0 and its Workers the others;
locally the step starts N processes with that environment (:mod:`sqlml.runtime.workers`)
and waits for them. Every process runs :func:`train`:

1. rank 0 has the database compute the SELECT (and validation.select) once into a helper
   table in which each row carries its part (:mod:`sqlml.runtime.partitions`), and prepares
   the training from it as external memory does: the label's classes (``SELECT
   DISTINCT``), the feature columns from the first rows; it hands them and the helper
   tables' names to the others through the collective;
2. each worker reads its part of the helper table (a read of its share of the rows only;
   the validation rows too: its part of ``validation.select``, or its share
   ``validation.split`` of its rows), applies the features and trains: XGBoost sums the
   workers' quantile sketches and histograms, so every worker grows the same trees;
3. each worker scores its validation rows with the trained model; rank 0 gathers the labels
   and scores of them all and computes the validation metrics on them, as one process
   would;
4. rank 0 drops the helper tables, and hands the model to TO TRAIN's handler, which stores
   it (in a pod), or leaves it for the step that started the workers, whose handler stores
   it (locally).

Locally the workers read what the datasource's ``for_workers`` says: the same SELECTs on the
same database, or (DuckDB, which opens its file in one process at a time) copies of the
rows made by the step in a temporary folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker

from sqlml import ir
from sqlml.datasources import Datasource
from sqlml.errors import ModelError, SqlmlError
from sqlml.models import family
from sqlml.runtime import external_memory, in_memory, partitions, training_data, workers
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding, check_label
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.rows import SCORE_BATCH, spelled
from sqlml.runtime.training_data import Batch, Trained

QUERY_SPAN = 2**32  # query ids of rank r are offset by r * QUERY_SPAN when gathered
STAGED = "staged.txt"  # rank 0's helper tables, named in the folder of a local step's workers


class Elsewhere(ModelError):
    """A worker stopped because another failed (that one's error says why)."""


def train(statement: ir.TrainStatement, context: Context) -> Trained | Outcome:
    """Train with the workers of the job this process is one of, or start them here: the
    trained model, for TO TRAIN's handler to store, or this worker's outcome when another
    process stores it."""
    if workers.job_size() == 1:
        return _launch(statement, context)
    rank, size = int(os.environ["RANK"]), workers.job_size()
    workers.watch_parent()
    try:
        try:
            trained = _work(statement, context, rank, size)
        except xgb.core.XGBoostError as error:  # the collective's: a worker is gone
            reason = str(error).strip().splitlines()[0]
            raise Elsewhere(f"the collective training stopped: {reason}") from None
    except SqlmlError as error:
        workers.record_error(error, consequence=isinstance(error, Elsewhere))
        raise
    if trained is None:
        return Outcome(summary=f"worker {rank} of {size} of {statement.model} done")
    folder = os.environ.get(workers.RESULT_ENV)
    if folder:  # started by a local step, which stores the model
        _leave(trained, Path(folder))
        return Outcome()
    return trained


def _launch(statement: ir.TrainStatement, context: Context) -> Trained:
    """Start ``train.workers`` local processes, wait for them; rank 0's model."""
    count = statement.attributes["train.workers"]
    with tempfile.TemporaryDirectory(prefix="sqlml-workers-") as name:
        folder = Path(name)
        shared, url = _worker_source(statement, context.datasource, folder)
        env = {"SQLML_DATASOURCE": url, "SQLML_CACHE": "off"}  # each part is read once
        try:
            with context.reporter.stage(f"training in {count} workers"):
                workers.run(ir.to_argument(shared.to_dict()), count, env, folder, context.token)
        finally:  # rank 0 drops its helper tables, unless it was stopped first
            staged = folder / STAGED
            for table in staged.read_text().split() if staged.exists() else ():
                partitions.drop(context.datasource, table)
        return _collect(folder)


def _worker_source(
    statement: ir.TrainStatement, datasource: Datasource, folder: Path
) -> tuple[ir.TrainStatement, str]:
    """The statement the workers run and their datasource's URL
    (:meth:`~sqlml.datasources.Datasource.for_workers`)."""
    selects = {"rows": statement.select}
    attributes = dict(statement.attributes)
    if attributes.get("validation.select"):
        selects["validation"] = attributes["validation.select"]
    read, url = datasource.for_workers(selects, folder)
    if "validation" in read:
        attributes["validation.select"] = read["validation"]
    return dataclasses.replace(statement, select=read["rows"], attributes=attributes), url


def _work(statement: ir.TrainStatement, context: Context, rank: int, size: int) -> Trained | None:
    """Worker ``rank``'s share of the training; rank 0 returns the trained model."""
    # The display's metrics would be computed when due on each worker's own clock: every
    # worker computes them (a collective operation) after the last round only.
    quiet = Context(context.datasource, context.token)
    staged: list[str] = []  # the helper tables rank 0 staged, dropped once all have trained
    try:
        with _tracker(rank, size), collective.CommunicatorContext(**_communicator(rank)):
            plan = _shared(rank, lambda: _prepare(statement, context, size, staged))
            labels = LabelEncoding.from_dict(plan["labels"])
            features = [ir.FeatureColumn.from_dict(feature) for feature in plan["features"]]
            part = _part(statement, context.datasource, plan, rank)
            split = _read(part, quiet, rank, size).split(labels)
            batch, validation = training_data.apply_features(
                statement.label, split, features, labels
            )
            trainer: Any = family("xgboost").trainer()
            data, details = trainer.train(
                quiet, batch.arrays, batch.y, labels, statement.attributes, None, batch.groups
            )
            rows = int(_gather(np.array([batch.rows]), rank, size).sum())
            y, score, groups = _scored(trainer.scorer(quiet, data, details), validation, batch)
            y_all, score_all = _gather(y, rank, size), _gather(score, rank, size)
            groups_all = None if groups is None else _gather(groups + rank * QUERY_SPAN, rank, size)
    finally:
        for table in staged:
            partitions.drop(context.datasource, table)
    if rank != 0:
        return None
    how = external_memory.held_out(statement.attributes)
    metrics: dict[str, float] = {}
    if how is not None and len(y_all):
        if labels.task == "classifier" and groups_all is None:
            score_all = score_all.reshape(len(y_all), -1)
        chosen = training_data.chosen_metrics(statement, labels)
        metrics, how = training_data.validation_metrics(
            y_all.astype(y.dtype), score_all, groups_all, how, labels, chosen
        )
    else:
        how = None
    return Trained(data, details, metrics, features, labels, rows, how, statement.attributes)


@contextmanager
def _tracker(rank: int, size: int) -> Iterator[None]:
    """On rank 0, XGBoost's tracker on ``MASTER_PORT``, waited for once training is done."""
    if rank != 0:
        yield
        return
    host = "127.0.0.1" if os.environ["MASTER_ADDR"] == "127.0.0.1" else "0.0.0.0"
    tracker = RabitTracker(
        n_workers=size, host_ip=host, port=int(os.environ["MASTER_PORT"]), sortby="task"
    )
    tracker.start()
    yield
    tracker.wait_for()


def _communicator(rank: int) -> dict[str, Any]:
    """The collective's settings: the tracker's address, this worker's rank as its task
    (sorted as text: zero-padded)."""
    return {
        "dmlc_communicator": "rabit",
        "dmlc_tracker_uri": os.environ["MASTER_ADDR"],
        "dmlc_tracker_port": int(os.environ["MASTER_PORT"]),
        "dmlc_task_id": f"{rank:09d}",
    }


def _shared(rank: int, prepare: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Rank 0's ``prepare()``, received by every worker (as JSON, through a sum: the others
    add zeros); an error preparing it stops them all."""
    failure = None
    plan: dict[str, Any] = {}
    if rank == 0:
        try:
            plan = prepare()
        except SqlmlError as error:
            failure, plan = error, {"error": error.message, "hint": error.hint}
    text = json.dumps(plan).encode() if rank == 0 else b""
    length = int(collective.allreduce(np.array([len(text)], dtype=np.int64), collective.Op.SUM)[0])
    buffer = np.zeros(length, dtype=np.uint8)
    if rank == 0:
        buffer[:] = np.frombuffer(text, dtype=np.uint8)
    plan = json.loads(collective.allreduce(buffer, collective.Op.SUM).tobytes())
    if failure is not None:
        raise failure
    if "error" in plan:
        raise Elsewhere(
            f"worker 0 could not prepare the training: {plan['error']}", hint=plan["hint"]
        )
    return plan


def _prepare(
    statement: ir.TrainStatement, context: Context, size: int, staged: list[str]
) -> dict[str, Any]:
    """What every worker trains with: the SELECT (and validation.select) staged once into
    ``size`` parts (:func:`~sqlml.runtime.partitions.stage`; each helper table's name is
    added to ``staged``), the columns of each, the label encoding and the feature
    columns, both from the staged rows."""
    datasource = context.datasource
    group = statement.attributes.get("train.group_column")

    def stage(select: str) -> tuple[str, dict[str, str]]:
        kinds = partitions.columns(datasource, select)
        keys = None if group is None else [_spelled(group, list(kinds))]
        table, relation = partitions.stage(datasource, select, kinds, size, keys)
        staged.append(table)
        folder = os.environ.get(workers.RESULT_ENV)
        if folder:  # started by a local step, which drops what is left once the workers end
            (Path(folder) / STAGED).write_text("\n".join(staged))
        return relation, kinds

    def whole(relation: str, kinds: dict[str, str]) -> str:
        names = ", ".join(datasource.quote([name]) for name in kinds)
        return f"SELECT {names} FROM {relation} AS sqlml_staged"

    rows, columns = stage(statement.select)
    attributes = dict(statement.attributes)
    validation, validation_columns = None, None
    if attributes.get("validation.select"):
        validation, validation_columns = stage(attributes["validation.select"])
        attributes["validation.select"] = whole(validation, validation_columns)
    read = dataclasses.replace(statement, select=whole(rows, columns), attributes=attributes)
    stream = external_memory.stream(read, context)
    labels, sample = training_data.fit_labelled(read, stream, None, 1)
    training_data.chosen_metrics(statement, labels)  # checked before the workers read
    features = training_data.derive_features(read, sample.sample)
    return {
        "labels": labels.to_dict(),
        "features": [dataclasses.asdict(feature) for feature in features],
        "rows": rows,
        "columns": columns,
        "validation": validation,
        "validation_columns": validation_columns,
    }


def _part(
    statement: ir.TrainStatement, datasource: Datasource, plan: dict[str, Any], rank: int
) -> ir.TrainStatement:
    """The statement of worker ``rank``'s part: its SELECT and validation.select read only
    the staged rows (a ranker's: the queries) that fall in the part."""
    attributes = dict(statement.attributes)
    if plan["validation"] is not None:
        attributes["validation.select"] = partitions.part(
            datasource, plan["validation"], plan["validation_columns"], rank
        )
    select = partitions.part(datasource, plan["rows"], plan["columns"], rank)
    return dataclasses.replace(statement, select=select, attributes=attributes)


def _spelled(name: str, names: list[str]) -> str:
    """``name`` as the database spells it among ``names`` (SQL's names ignore case)."""
    return next((found for found in names if found.casefold() == name.casefold()), name)


def _read(part: ir.TrainStatement, context: Context, rank: int, size: int) -> in_memory.InMemory:
    """Worker ``rank``'s rows, read whole."""
    columns = spelled(context.datasource.read(part.select), in_memory.statement_columns(part))
    if not len(next(iter(columns.values()), ())):
        raise ModelError(
            f"worker {rank} of {size} got no rows: the SELECT's rows fall in fewer parts than "
            "train.workers (identical rows, or a ranker's queries, stay together)",
            hint="lower train.workers",
        )
    check_label(part.label, columns, "the SELECT")
    return in_memory.InMemory(part, context, columns)


def _scored(
    score: Callable[[FeatureArrays, int], np.ndarray],
    validation: Iterator[Batch],
    batch: Batch,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """This worker's validation rows' labels, scores and (rankers) queries; empty without."""
    held = next(validation, None)
    if held is None:
        empty = np.zeros(0, dtype=batch.y.dtype)
        return empty, np.zeros(0), None if batch.groups is None else np.zeros(0, np.int64)
    return held.y, score(held.arrays, SCORE_BATCH), held.groups


def _gather(values: np.ndarray, rank: int, size: int) -> np.ndarray:
    """Every worker's ``values``, flattened, one after the other in rank order (float64:
    exact for labels, ids and scores)."""
    flat = values.ravel().astype(np.float64)
    counts = np.zeros(size, dtype=np.int64)
    counts[rank] = flat.size
    counts = collective.allreduce(counts, collective.Op.SUM)
    start = int(counts[:rank].sum())
    buffer = np.zeros(int(counts.sum()), dtype=np.float64)
    buffer[start : start + flat.size] = flat
    return collective.allreduce(buffer, collective.Op.SUM)


def _leave(trained: Trained, folder: Path) -> None:
    """Rank 0's model and what its metadata records, for the local step that stores it."""
    (folder / "model.ubj").write_bytes(trained.data)
    fields = {f.name: getattr(trained, f.name) for f in dataclasses.fields(trained)}
    fields.update(
        data=None,
        features=[dataclasses.asdict(feature) for feature in trained.features],
        labels=trained.labels.to_dict(),
    )
    (folder / "trained.json").write_text(json.dumps(fields))


def _collect(folder: Path) -> Trained:
    """What :func:`_leave` left."""
    fields = json.loads((folder / "trained.json").read_text())
    fields.update(
        data=(folder / "model.ubj").read_bytes(),
        features=[ir.FeatureColumn.from_dict(feature) for feature in fields["features"]],
        labels=LabelEncoding.from_dict(fields["labels"]),
    )
    return Trained(**fields)
