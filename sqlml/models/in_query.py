"""A stored model as a function that a query calls in sqlml's process (``PREDICT``,
``PREDICT_PROBA`` and ``PREDICT_CONTRIBUTION`` on DuckDB and SQLite, and where sqlml scores
the rows a query returns): the columns its features read go in, what TO PREDICT writes (a
class's probability, a feature's SHAP contribution) comes out, scored by the family's own
scorer on the features TO PREDICT derives from the same values, so the two agree (but for
the last bit of sums that a library rounds by the number of rows it scores at once)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from sqlml.datasources.base import QueryFunction
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.models.applied import Model
from sqlml.models.interface import Family, TreeTrainer
from sqlml.runtime import label_lists
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.progress import Progress
from sqlml.runtime.rows import SCORE_BATCH, named_columns

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel
    from sqlml.runtime.context import Context

_NUMBER_KINDS = ("numeric", "bucket")  # read as numbers (unless trained on text)
_RESULT_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float"}  # else text


def query_function(
    name: str,
    model: Model,
    context: Context,
    label: str | None = None,
    feature: str | None = None,
) -> QueryFunction:
    """``model`` as the function ``name`` of the columns :func:`read_columns` lists:
    ``PREDICT``'s value; with ``label`` alone, the probability of that class (its text);
    with ``feature``, its contribution (of ``label``'s class where the model has several);
    a :class:`ModelError` if the model gives none such."""
    columns = read_columns(model)
    kinds = [_parameter_kind(model, column) for column in columns]
    quiet = dataclasses.replace(context, reporter=Progress())  # a query's rows go unreported
    stored, trainer = model.stored, model.trainer

    def features(arrays: list[np.ndarray]) -> FeatureArrays:
        return transform(dict(zip(columns, arrays, strict=True)), model.features)

    if feature is not None:
        at, of_class, sign = contribution_index(model.family, model.labels, stored, feature, label)

        def contribution(arrays: list[np.ndarray]) -> np.ndarray:
            found = cast(TreeTrainer, trainer).contributions(
                quiet, stored.data, features(arrays), stored.metadata
            )
            picked = found[:, at] if of_class is None else found[:, of_class, at]
            return sign * picked.astype(np.float64)

        return QueryFunction(name, kinds, "float", contribution)
    score = trainer.scorer(quiet, stored.data, stored.metadata)
    index = None if label is None else class_index(model.labels, stored.name, label)

    def call(arrays: list[np.ndarray]) -> np.ndarray:
        scores = score(features(arrays), SCORE_BATCH)
        return model.predicted(scores) if index is None else scores[:, index].astype(np.float64)

    return QueryFunction(name, kinds, "float" if index is not None else _result_kind(model), call)


def contribution_index(
    family: Family, labels: LabelEncoding, stored: StoredModel, feature: str, label: str | None
) -> tuple[int, int | None, float]:
    """Where ``feature``'s contribution (to ``label``'s class) is in the family's SHAP
    contributions: the feature's index, the class's (None: one output) and the sign (a
    binary model's are of the second class's margin, the first's being its negative); a
    :class:`ModelError` saying what the model does not give."""
    name = stored.name
    if "TreeExplainer" not in family.explainers:
        raise ModelError(
            f"model {name} ({stored.metadata['estimator']}) gives no per-row contributions: "
            "PREDICT_CONTRIBUTION takes tree models (TreeExplainer's SHAP values)",
            hint=f"TO EXPLAIN {name} USING {family.explainers[0]} attributes its features",
        )
    names = [FeatureColumn.from_dict(f).name for f in stored.metadata["features"]]
    if feature not in names:
        raise ModelError(
            f"model {name} has no feature {feature!r}",
            hint=f"its features: {', '.join(map(repr, names))}",
        )
    texts = [str(c) for c in labels.classes]
    several = labels.task == "classifier" and len(texts) > 2
    if label is not None and labels.task != "classifier":
        raise ModelError(
            f"model {name} predicts values: PREDICT_CONTRIBUTION of it takes no class",
            hint=f"write PREDICT_CONTRIBUTION({name}, {feature!r})",
        )
    if label is None:
        if several:
            raise ModelError(
                f"model {name} has {len(texts)} classes: PREDICT_CONTRIBUTION needs one",
                hint=f"write PREDICT_CONTRIBUTION({name}, {feature!r}, 'class'); its classes: "
                + ", ".join(map(repr, texts)),
            )
        return names.index(feature), None, 1.0
    index = class_index(labels, name, label)
    if several:
        return names.index(feature), index, 1.0
    return names.index(feature), None, 1.0 if index == 1 else -1.0


def check_row_wise(name: str, metadata: dict[str, Any]) -> None:
    """A :class:`ModelError` if the model ``name`` (its ``metadata``) is of a family that
    scores the rows of a SELECT together (:attr:`~sqlml.models.Family.scores_together`):
    a query's function is called on a few of its rows at a time, in the database's order."""
    from sqlml.models import family

    why = family(metadata["family"]).scores_together
    if why is not None:
        raise ModelError(
            f"model {name} ({metadata['estimator']}) scores the rows of its SELECT together "
            f"({why}), which PREDICT in a query cannot: the database calls sqlml's function "
            "on a few of the query's rows at a time",
            hint="score the rows into a table with TO PREDICT, then query the table",
        )


def read_columns(model: Model) -> list[str]:
    """The columns the model's features read, in order: a call's arguments."""
    return list(dict.fromkeys(named_columns(model.features)))


def class_index(labels: LabelEncoding, model: str, label: str) -> int:
    """The index, among the scores of ``model`` (its ``labels``), of the class whose text is
    ``label``."""
    texts = [str(c) for c in labels.classes]
    if labels.task == "classifier" and label in texts:
        return texts.index(label)
    raise ModelError(
        f"model {model} gives no probability of the class {label!r}",
        hint=f"its classes: {', '.join(map(repr, texts))}"
        if labels.task == "classifier"
        else "it predicts values, not classes: use PREDICT",
    )


def _parameter_kind(model: Model, column: str) -> str:
    """How a call passes ``column``: as the numbers or the text the model was trained on
    (by what its features make of it where that was not recorded)."""
    trained = (model.stored.metadata.get("column_types") or {}).get(column)
    if trained is not None:
        return "float" if trained == "numbers" else "text"
    kinds = {f.kind for f in model.features if f.column == column}
    kinds |= {f.kind for f in model.features for i in f.inputs if i.column == column}
    return "float" if kinds <= set(_NUMBER_KINDS) else "text"


def _result_kind(model: Model) -> str:
    """The type of what :meth:`Model.predicted` returns."""
    labels = model.labels
    if labels.task != "classifier":
        return "float" if label_lists.width(model.stored.metadata["attributes"]) == 1 else "text"
    return _RESULT_KINDS.get(labels.kind, "text")
