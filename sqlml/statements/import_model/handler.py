"""TO IMPORT: read a model file (its family checks it before its library reads it), check its
inputs against COLUMN and the SELECT's first rows (the model scores them), store it as the
next version of the model, with metadata shaped like a trained model's."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from pathlib import Path
from typing import Any, cast

import numpy as np

import sqlml
from sqlml import ir
from sqlml.datasources import Columns
from sqlml.datasources.base import closing_batches
from sqlml.errors import ModelError, SqlmlError
from sqlml.models.checks import MAX_MODEL_BYTES
from sqlml.models.interface import Imported, ImportingTrainer
from sqlml.models.registry import families, importable_formats, importing
from sqlml.models.store import ModelStore
from sqlml.runtime import lineage
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import transform
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.rows import SCORE_BATCH, check_rows, spelled

CHECK_ROWS = 1_000  # the SELECT's first rows, which the imported model scores as a check
# The first bytes of a pickle (protocol 2 and later), and of a zip archive.
_PICKLE = tuple(bytes([0x80, protocol]) for protocol in range(2, 6))
_ZIP = b"PK\x03\x04"


def import_model(statement: ir.ImportModelStatement, context: Context) -> Outcome:
    path = context.datasource.program_file(statement.file)
    data = _read(statement, path)
    fmt = statement.format or _format(statement, path, data)
    family = importing(fmt)
    if family is None:  # a format no registered family reads any more
        raise _at_file(statement, ModelError(f"TO IMPORT reads no files of format {fmt!r}"))
    trainer = cast(ImportingTrainer, family.trainer())
    try:
        imported = trainer.import_model(data)
    except SqlmlError as error:
        raise _at_file(statement, error) from None
    _check_inputs(statement, imported)
    features = [ir.FeatureColumn("numeric", column, {"shape": 1}) for column in statement.columns]
    labels = LabelEncoding(imported.task, imported.classes, _kind(imported))
    metadata: dict[str, Any] = {
        "estimator": imported.estimator,
        "family": family.name,
        "format": family.format,
        "attributes": {},
        "features": [dataclasses.asdict(feature) for feature in features],
        "label": statement.label,
        "labels": labels.to_dict(),
        "statement": statement.text,
        "rows": 0,
        "validation": None,
        "base_model": None,
        "trained_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sqlml_version": sqlml.__version__,
        "params": imported.params,
        "metrics": {},
        "column_types": dict.fromkeys(statement.columns, "numbers"),
        "imported": {
            "file": path.name,
            "format": fmt,
            "sha256": hashlib.sha256(data).hexdigest(),
        },
        # who imported it where (no tables: it was trained on none here)
        lineage.KEY: lineage.lineage(statement, context, family.libraries, {}),
    }
    rows = _check_scores(statement, context, trainer, imported, features, metadata)
    version = ModelStore(context.datasource).save(
        statement.model, metadata, imported.data, context.token
    )
    what = f"{len(imported.classes)} classes" if imported.task == "classifier" else "values"
    return Outcome(
        summary=f"imported {statement.model} version {version} ({imported.estimator}) from "
        f"{path.name} ({fmt}): it reads {', '.join(statement.columns)} and predicts {what}; "
        f"it scored the SELECT's first {rows} rows"
    )


def _read(statement: ir.ImportModelStatement, path: Path) -> bytes:
    """The file's bytes: at most :data:`MAX_MODEL_BYTES`, and no pickle."""
    try:
        size = path.stat().st_size
        if size > MAX_MODEL_BYTES:
            raise _at_file(
                statement,
                ModelError(
                    f"{path} is {size:,} bytes, more than sqlml stores ({MAX_MODEL_BYTES:,})",
                    hint="import a smaller model",
                ),
            )
        data = path.read_bytes()
    except OSError as error:
        raise _at_file(
            statement,
            ModelError(
                f"cannot read the model file {path}: {error.strerror}",
                hint="the file is read by the process that runs the statement (on Kubernetes, "
                "its pod): name a file there, relative paths from the program's folder",
            ),
        ) from None
    if data.startswith(_PICKLE):
        raise _at_file(
            statement,
            ModelError(
                f"{path.name} is a Python pickle, which runs code as it loads: sqlml never "
                "loads pickles",
                hint="save the model in a format that holds data only: "
                + ", ".join(f"{f} ({', '.join(e)})" for f, e in importable_formats().items()),
            ),
        )
    return data


def _format(statement: ir.ImportModelStatement, path: Path, data: bytes) -> str:
    """The file's format, by its extension, else as a family tells it by its first bytes."""
    by_extension = {
        extension: fmt
        for fmt, extensions in importable_formats().items()
        for extension in extensions
    }
    found = by_extension.get(path.suffix.lower())
    if found is None:
        told = (each.import_format_of(data) for each in families().values())
        found = next((fmt for fmt in told if fmt), None)
    if found is None:
        raise _at_file(
            statement,
            ModelError(
                f"cannot tell the format of {path.name} from its extension or its first bytes",
                hint=f"name it WITH format = <format>: {', '.join(importable_formats())}",
            ),
        )
    return found


def _check_inputs(statement: ir.ImportModelStatement, imported: Imported) -> None:
    """A :class:`ModelError` at COLUMN unless it names as many columns as the model reads
    values, and the same names (any case) where the model names its inputs."""
    given = statement.columns
    if imported.inputs != len(given):
        named = f" ({', '.join(imported.names)})" if imported.names else ""
        raise _at_columns(
            statement,
            f"the model reads {imported.inputs} inputs{named}, but COLUMN names {len(given)}",
            "name one column of the SELECT for each input, in the model's order",
        )
    if imported.names and [n.casefold() for n in imported.names] != [g.casefold() for g in given]:
        wrong = [
            f"{g} (the model's input {i + 1} is {n})"
            for i, (n, g) in enumerate(zip(imported.names, given, strict=True))
            if n.casefold() != g.casefold()
        ]
        raise _at_columns(
            statement,
            f"COLUMN does not name the model's inputs: {', '.join(wrong)}",
            f"name them in the model's order: COLUMN {', '.join(imported.names)} (rename "
            "columns in the SELECT with AS)",
        )


def _check_scores(
    statement: ir.ImportModelStatement,
    context: Context,
    trainer: ImportingTrainer,
    imported: Imported,
    features: list[ir.FeatureColumn],
    metadata: dict[str, Any],
) -> int:
    """The model scores the SELECT's first :data:`CHECK_ROWS` rows (its columns checked to
    hold numbers); the number of rows scored."""
    columns = _first_rows(statement, context)
    missing = [c for c in statement.columns if c not in columns]
    if missing:
        raise _at_columns(
            statement,
            f"COLUMN names {', '.join(missing)}, which the SELECT does not return",
            f"the SELECT returns {', '.join(columns)}",
        )
    text = [c for c in statement.columns if columns[c].dtype.kind not in "biuf"]
    if text:
        raise _at_columns(
            statement,
            f"column {', '.join(text)} of the SELECT does not hold numbers, which the model reads",
            f"select numbers, e.g. CAST({text[0]} AS DOUBLE)",
        )
    score = trainer.scorer(context, imported.data, metadata)
    with context.reporter.stage("checking", unit="rows"):
        scores = score(transform(columns, features), SCORE_BATCH)
    expected = (len(imported.classes),) if imported.task == "classifier" else ()
    if scores.shape[1:] != expected or not np.isfinite(scores).all():
        raise _at_file(
            statement,
            ModelError(
                "the model's scores of the SELECT's rows are not "
                + ("class probabilities" if expected else "finite values"),
                hint="check that the file holds the model you mean",
            ),
        )
    return len(scores)


def _first_rows(statement: ir.ImportModelStatement, context: Context) -> Columns:
    with (
        context.datasource.concurrent_reader() as reader,
        closing_batches(reader.read_batches(statement.select, CHECK_ROWS)) as batches,
    ):
        columns = next(iter(batches), {})
    check_rows(columns)
    return spelled(columns, statement.columns)


def _kind(imported: Imported) -> str:
    """The numpy kind of the values the model predicts, as a label's."""
    if imported.task == "regressor":
        return "f"
    return np.asarray(imported.classes).dtype.kind


def _at_file(statement: ir.ImportModelStatement, error: SqlmlError) -> SqlmlError:
    return error.at(*statement.file_at)


def _at_columns(statement: ir.ImportModelStatement, message: str, hint: str) -> ModelError:
    line, column = statement.columns_at
    return ModelError(message, line=line, column=column, hint=hint)
