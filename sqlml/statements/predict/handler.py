"""TO PREDICT: a stored model's predictions for the rows of a SELECT, into a table."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns
from sqlml.datasources.base import closing_batches
from sqlml.errors import ModelError
from sqlml.models import PROBABILITIES, ExtraScoringTrainer
from sqlml.models.applied import Model, load_model, model_columns
from sqlml.models.estimator import warn
from sqlml.models.interface import RowsTrainer
from sqlml.runtime.cells import value_texts
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.rows import check_rows, spelled
from sqlml.statements import kind_of

MAX_COLUMN_NAME = 63  # PostgreSQL's limit (MySQL's is 64)
_PLAIN_CLASS = re.compile(r"[a-z0-9_]+")


def predict(statement: ir.PredictStatement, context: Context) -> Outcome:
    """Score the SELECT's rows batch by batch, each batch written as it is scored: memory
    holds a batch, whatever the number of rows."""
    datasource, token = context.datasource, context.token
    model = load_model(statement.model, datasource, statement.version)
    replace = kind_of(statement).effects.may_replace(statement)
    datasource.check_target(statement.table, replace)  # before any work
    extras = _extra_outputs(statement, model)
    if "predict.confidence_level" in statement.attributes and not model.family.predicts_rows:
        raise ModelError(
            f"predict.confidence_level needs a forecasting model; {statement.model} is a "
            f"{model.stored.metadata['estimator']}",
            hint="remove predict.confidence_level",
        )
    label = model.stored.metadata["label"]
    result = result_column(statement, label)
    classes = model.labels.classes
    names = probability_columns(result, classes) if PROBABILITIES in extras else []
    own = [name for name in extras if name != PROBABILITIES]
    score = _scorer(context, model, bool(own))
    batch_rows = statement.attributes["predict.batch_size"]
    names_read = [*model_columns(model), result]

    def checked(source: Iterator[Columns]) -> Iterator[Columns]:
        for index, read in enumerate(source):
            columns = spelled(read, names_read)
            if index == 0:
                check_rows(columns)
                _check_result_columns(statement, result, model, columns, [*names, *own])
            token.check()
            yield columns

    def predicted(batches: Iterator[Columns]) -> Iterator[Columns]:
        """The output batches; the read ends (its transaction too) when they end, not when
        the garbage collector gets to it."""
        with closing_batches(batches) as source:
            if model.family.predicts_rows:  # a forecast's rows: a RowsTrainer's
                trainer = cast(RowsTrainer, model.trainer)
                yield from trainer.predicted_rows(
                    context, model, checked(source), result, statement.attributes
                )
                return
            for columns in checked(source):
                scores, values = score(transform(columns, model.features), batch_rows)
                output = {k: v for k, v in columns.items() if k not in (label, result)}
                output[result] = model.predicted(scores)
                for extra in extras:  # in the order asked for, as SQLFlow writes them
                    if extra == PROBABILITIES:
                        output.update({name: scores[:, i] for i, name in enumerate(names)})
                    else:
                        output[extra] = values[extra]
                yield output

    with (
        datasource.concurrent_reader() as reader,
        context.reporter.stage("predicting", unit="rows"),
    ):
        batches = predicted(reader.read_batches(statement.select, batch_rows))
        rows = datasource.write_batches(statement.table, batches, replace, token)
    return Outcome(
        summary=f"predicted {rows} rows into {'.'.join(statement.table)}.{result} "
        f"with {statement.model}",
        model=(statement.model, model.stored.version),
    )


def _extra_outputs(statement: ir.PredictStatement, model: Model) -> list[str]:
    """The extra outputs asked for (``predict.extra_outputs``); a :class:`ModelError` at the
    attribute for one that the model does not offer, naming those it does."""
    asked = (statement.attributes.get("predict.extra_outputs") or "").split(",")
    asked = [name for name in asked if name]
    metadata = model.stored.metadata
    offered = model.family.extra_outputs(metadata)
    unknown = [name for name in asked if name not in offered]
    if not unknown:
        return asked
    regressor = " (it predicts numbers)" if metadata["labels"]["task"] == "regressor" else ""
    error = ModelError(
        f"{statement.model} ({metadata['estimator']}) offers no extra output "
        f"{', '.join(unknown)}; it offers {', '.join(offered) or 'none'}{regressor}",
        hint="; ".join(f"{name}: {what}" for name, what in offered.items())
        or "remove predict.extra_outputs",
    )
    found = re.search(r"predict\.extra_outputs", statement.text, re.IGNORECASE)
    if found:
        error.pinpoint(statement.text, statement.line, statement.column, found.start())
    raise error


def _scorer(
    context: Context, model: Model, own: bool
) -> Callable[[FeatureArrays, int], tuple[np.ndarray, dict[str, np.ndarray]]]:
    """The model's scorer, with the extra outputs of its family's own when ``own``."""
    data, metadata = model.stored.data, model.stored.metadata
    if own:
        trainer = cast(ExtraScoringTrainer, model.trainer)
        return trainer.extra_scorer(context, data, metadata)
    score = model.trainer.scorer(context, data, metadata)
    return lambda features, batch_size: (score(features, batch_size), {})


def result_column(statement: ir.PredictStatement, label: str) -> str:
    """The column the predictions go into: the one named, else the model's ``label`` (a
    :class:`ModelError` for a model trained without one)."""
    if statement.result_column is not None:
        return statement.result_column
    if not label:
        table = ".".join(statement.table)
        raise ModelError(
            f"TO PREDICT {table} names no result column, and {statement.model} was trained "
            "without a LABEL to name it after",
            hint=f"name the column: TO PREDICT {table}.<result column>",
        )
    return label


def _check_result_columns(
    statement: ir.PredictStatement, result: str, model: Model, columns: Columns, extra: list[str]
) -> None:
    """The ``result`` column takes the place of a selected column of its name, as in SQLFlow:
    the label's silently, another's with a warning. A :class:`ModelError` if an extra output
    (a class probability, a score) would replace a selected column or the result."""
    label = model.stored.metadata["label"]
    table = ".".join(statement.table)
    if result in extra:
        raise ModelError(
            f"TO PREDICT {table}.{result}: the extra output {result} would replace the result",
            hint="name the result column differently",
        )
    if result in columns and result != label:
        feature = " (a feature of the model)" if result in _feature_names(model) else ""
        warn(
            statement.line,
            statement.column,
            f"TO PREDICT {table}.{result}: the predictions replace the "
            f"SELECT's column {result}{feature}, as in SQLFlow; select it under another name "
            "to keep it",
        )
    taken = [name for name in extra if name in columns and name != label]
    if taken:
        features = _feature_names(model)
        what = [f"{name} (a feature of the model)" if name in features else name for name in taken]
        raise ModelError(
            f"TO PREDICT {table}.{result}: the SELECT already returns "
            f"{', '.join(what)}, which the extra outputs (predict.extra_outputs) would replace",
            hint="name the result column differently, or leave those columns out of the SELECT",
        )


def _feature_names(model: Model) -> set[str]:
    return {feature.name for feature in model.features}


def probability_columns(result: str, classes: list[Any]) -> list[str]:
    """The names of the class probability columns, in the order of the classes.

    ``<result>_<class>`` when every class reads as lower-case letters, digits and ``_``
    (booleans as ``true``/``false``) and the names fit every database; else
    ``<result>_prob_<index>``.
    """
    texts = [
        str(c).lower() if isinstance(c, bool) else text
        for c, text in zip(classes, value_texts(np.array(classes, dtype=object)), strict=True)
    ]
    names = [f"{result}_{text}" for text in texts]
    plain = all(_PLAIN_CLASS.fullmatch(text) for text in texts)
    if plain and len(set(names)) == len(names) and max(map(len, names)) <= MAX_COLUMN_NAME:
        return names
    return [f"{result}_prob_{i}" for i in range(len(classes))]
