"""Run one IR statement against a datasource: the work behind every step."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import numpy as np

import sqlml
from sqlml import ir
from sqlml.errors import ModelError, SqlmlError
from sqlml.runtime.datasource import Datasource, ResultSet
from sqlml.runtime.features import check_rows, feature_matrix
from sqlml.runtime.labels import LabelEncoding, fit_labels
from sqlml.runtime.model_store import ModelStore
from sqlml.runtime.models import family


@dataclass(frozen=True)
class Outcome:
    """What a statement produced: rows to show and/or a one-line summary."""

    result: ResultSet | None = None
    summary: str | None = None


def execute(statement: ir.Statement, datasource: Datasource) -> Outcome:
    """Run ``statement``; user errors come out as :class:`SqlmlError` with its location."""
    try:
        if isinstance(statement, ir.TrainStatement):
            return train(statement, datasource)
        if isinstance(statement, ir.PredictStatement):
            return predict(statement, datasource)
        return Outcome(result=datasource.execute(statement.text))
    except SqlmlError as error:
        raise error.at(statement.line, statement.column) from None


def train(statement: ir.TrainStatement, datasource: Datasource) -> Outcome:
    columns = datasource.read(statement.select)
    rows = check_rows(columns)
    if statement.label not in columns:
        raise ModelError(
            f"LABEL column {statement.label} is not in the result of the SELECT",
            hint=f"the SELECT returns: {', '.join(columns)}",
        )
    features = statement.features or [name for name in columns if name != statement.label]
    x = feature_matrix(columns, features)
    labels = fit_labels(
        statement.label,
        columns[statement.label],
        statement.task,
        statement.attributes.get("objective"),
    )
    trainer = family(statement.family)
    data, details = trainer.train(
        x, labels.encode(columns[statement.label]), labels, statement.attributes
    )
    metadata = {
        "estimator": statement.estimator,
        "family": statement.family,
        "format": trainer.FORMAT,
        "attributes": statement.attributes,
        "features": features,
        "label": statement.label,
        "labels": labels.to_dict(),
        "statement": statement.text,
        "rows": rows,
        "trained_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sqlml_version": sqlml.__version__,
        **details,
    }
    ModelStore(datasource).save(statement.model, metadata, data)
    shown = ", ".join(f"{name} {value:.4g}" for name, value in details["metrics"].items())
    return Outcome(
        summary=f"trained {statement.model} ({statement.estimator}) on {rows} rows: {shown}"
    )


def predict(statement: ir.PredictStatement, datasource: Datasource) -> Outcome:
    stored = ModelStore(datasource).load(statement.model)
    metadata = stored.metadata
    columns = datasource.read(statement.select)
    check_rows(columns)
    x = feature_matrix(columns, metadata["features"])
    labels = LabelEncoding.from_dict(metadata["labels"])
    trainer = family(metadata["family"])
    if metadata["format"] != trainer.FORMAT:
        raise ModelError(
            f"model {statement.model} is stored as {metadata['format']}, "
            f"which this version of sqlml cannot read"
        )
    predictions = trainer.predict(
        stored.data, x, metadata, statement.attributes["predict.batch_size"]
    )
    output = {
        name: values
        for name, values in columns.items()
        if name not in (metadata["label"], statement.result_column)
    }
    output[statement.result_column] = np.asarray(labels.decode(predictions))
    datasource.write_table(statement.table, output)
    table = ".".join(statement.table)
    return Outcome(
        summary=f"predicted {len(x)} rows into {table}.{statement.result_column} "
        f"with {statement.model}"
    )
