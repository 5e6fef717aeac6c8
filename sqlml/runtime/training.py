"""TO TRAIN: read the SELECT, fit the estimator, store the model."""

from __future__ import annotations

import dataclasses
import datetime

import sqlml
from sqlml import ir
from sqlml.errors import ModelError
from sqlml.runtime.datasource import Datasource
from sqlml.runtime.execute import Outcome
from sqlml.runtime.feature_arrays import transform
from sqlml.runtime.feature_columns import derive
from sqlml.runtime.features import check_rows
from sqlml.runtime.labels import fit_labels
from sqlml.runtime.model_store import ModelStore
from sqlml.runtime.models import family


def train(statement: ir.TrainStatement, datasource: Datasource) -> Outcome:
    columns = datasource.read(statement.select)
    rows = check_rows(columns)
    if statement.label not in columns:
        raise ModelError(
            f"LABEL column {statement.label} is not in the result of the SELECT",
            hint=f"the SELECT returns: {', '.join(columns)}",
        )
    features = derive(columns, statement.features, statement.label)
    arrays = transform(columns, features)
    labels = fit_labels(
        statement.label,
        columns[statement.label],
        statement.task,
        statement.attributes.get("objective"),
    )
    trainer = family(statement.family)
    data, details = trainer.train(
        arrays, labels.encode(columns[statement.label]), labels, statement.attributes
    )
    metadata = {
        "estimator": statement.estimator,
        "family": statement.family,
        "format": trainer.FORMAT,
        "attributes": statement.attributes,
        "features": [dataclasses.asdict(feature) for feature in features],
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
