"""SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL and DROP MODEL on the model store."""

from __future__ import annotations

import json

from sqlml import ir
from sqlml.datasources import ResultSet
from sqlml.errors import ModelError
from sqlml.models.store import ModelStore
from sqlml.runtime.context import Context
from sqlml.runtime.lineage import described
from sqlml.runtime.outcome import Outcome


def show_train(statement: ir.ShowTrainStatement, context: Context) -> Outcome:
    metadata = ModelStore(context.datasource).load(statement.model, check=False).metadata
    return Outcome(
        result=ResultSet(["model", "train_statement"], [(statement.model, metadata["statement"])])
    )


UNREADABLE = "(metadata unreadable)"


def show_models(statement: ir.ShowModelsStatement, context: Context) -> Outcome:
    """The newest version of every model. One whose stored metadata is damaged is listed
    with its name and version, ``(metadata unreadable)`` as its estimator and NULL in the
    other columns, and named in the summary (DESCRIBE MODEL says what is wrong)."""
    rows, damaged = [], []
    for name, version, meta in ModelStore(context.datasource).catalog():
        if isinstance(meta, ModelError):
            rows.append((name, version, UNREADABLE, None, None, None))
            damaged.append(f"{name} (version {version})")
        else:
            rows.append(
                (name, version, meta["estimator"], meta["label"], meta["rows"], meta["trained_at"])
            )
    columns = ["model", "version", "estimator", "label", "rows", "trained_at"]
    summary = None
    if damaged:
        summary = f"the metadata of {', '.join(damaged)} is unreadable; DESCRIBE MODEL says why"
    return Outcome(result=ResultSet(columns, rows), summary=summary)


def describe_model(statement: ir.DescribeModelStatement, context: Context) -> Outcome:
    stored = ModelStore(context.datasource).load(statement.model, check=False)
    meta = stored.metadata
    labels = meta["labels"]
    rows = [
        ("version", str(stored.version)),
        ("estimator", meta["estimator"]),
        ("format", meta["format"]),
        ("task", labels["task"]),
        ("label", meta["label"]),
        ("classes", json.dumps(labels["classes"])),
        ("features", ", ".join(ir.FeatureColumn.from_dict(f).name for f in meta["features"])),
        ("attributes", json.dumps(meta["attributes"], sort_keys=True)),
        ("metrics", json.dumps(meta["metrics"], sort_keys=True)),
        ("rows", str(meta["rows"])),
        ("validation", json.dumps(meta.get("validation"), sort_keys=True)),
        ("base_model", json.dumps(meta.get("base_model"), sort_keys=True)),
        ("trained_at", meta["trained_at"]),
        ("sqlml_version", meta["sqlml_version"]),
        *described(meta),
    ]
    return Outcome(result=ResultSet(["property", "value"], rows))


def drop_model(statement: ir.DropModelStatement, context: Context) -> Outcome:
    if ModelStore(context.datasource).drop(statement.model):
        return Outcome(summary=f"dropped model {statement.model}")
    if statement.if_exists:
        return Outcome(summary=f"model {statement.model} does not exist; nothing dropped")
    raise ModelError(
        f"model {statement.model} does not exist in {context.datasource.url}",
        hint="use DROP MODEL IF EXISTS to ignore a missing model; SHOW MODELS lists them",
    )
