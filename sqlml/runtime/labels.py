"""Labels: classes for classifiers (any column type), numbers for regressors; and the query
of each row for rankers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.models.attributes import MAX_CLASSES
from sqlml.runtime.cells import FLOAT32_MAX, value_texts

CLASSIFIER_OBJECTIVE_PREFIXES = ("binary:", "multi:")


@dataclass(frozen=True)
class LabelEncoding:
    """How label values map to what a model learns; stored with the model as JSON."""

    task: str  # "classifier" or "regressor"
    classes: list[Any]  # sorted class values (classifier), empty for a regressor
    kind: str  # numpy dtype kind of the label column, so predictions are typed like it

    def encode(self, values: np.ndarray) -> np.ndarray:
        if self.task == "regressor":
            return values.astype(np.float32)
        if values.dtype.kind in "biuf" and all(isinstance(c, int | float) for c in self.classes):
            classes = np.array(self.classes)  # sorted
            ids = np.searchsorted(classes, values).clip(0, len(classes) - 1)
            if np.array_equal(classes[ids], values):  # every value a class
                return ids.astype(np.int32)
        index = {value: i for i, value in enumerate(self.classes)}
        return np.array([index[value] for value in values.tolist()], dtype=np.int32)

    def unknown(self, values: np.ndarray) -> list[Any]:
        """The classes in ``values`` that this encoding lacks (none for a regressor)."""
        if self.task == "regressor":
            return []
        present = np.unique(values) if values.dtype.kind in "biuf" else values
        return sorted(set(present.tolist()) - set(self.classes), key=str)

    def decode(self, predictions: np.ndarray) -> np.ndarray:
        if self.task == "regressor":
            return predictions.astype(np.float64)
        classes = np.array(self.classes, dtype=object if self.kind in "OSU" else None)
        return classes[predictions.astype(np.int64)]

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "classes": self.classes, "kind": self.kind}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelEncoding:
        return cls(data["task"], data["classes"], data["kind"])


def fit_labels(name: str, values: np.ndarray, task: str, objective: str | None) -> LabelEncoding:
    """Decide the task (for ``auto``) and the classes of a label column."""
    numeric = values.dtype.kind in "iuf"
    check_not_null(name, values, "the SELECT")
    task = decide_task(values, task, objective)
    if task == "regressor":
        if not numeric:
            raise ModelError(
                f"LABEL column {name} holds text, but a regressor needs numbers",
                hint="use a classification objective, e.g. objective = 'multi:softprob'",
            )
        return LabelEncoding("regressor", [], values.dtype.kind)
    classes = np.unique(values).tolist() if numeric else sorted(set(values.tolist()))
    if len(classes) > MAX_CLASSES:
        raise ModelError(
            f"LABEL column {name} has {len(classes):,} classes; sqlml classifies up to "
            f"{MAX_CLASSES:,}",
            hint="predict numbers with a regressor (e.g. objective = 'reg:squarederror'), "
            "or group the classes in the SELECT",
        )
    if len(classes) < 2:
        raise ModelError(
            f"LABEL column {name} has a single class ({classes[0]!r}); a classifier needs two",
            hint="check the SELECT's WHERE clause",
        )
    return LabelEncoding("classifier", classes, values.dtype.kind)


def unlabelled(attributes: dict[str, Any]) -> LabelEncoding:
    """What a model trained without a LABEL predicts: a cluster id below ``model.n_clusters``
    (clustering), else 1 for an inlier and -1 for an outlier (outlier detection)."""
    clusters = attributes.get("model.n_clusters")
    return LabelEncoding("classifier", list(range(clusters)) if clusters else [-1, 1], "i")


def decide_task(values: np.ndarray, task: str, objective: str | None) -> str:
    """The estimator's task, or for ``auto`` the objective's, or else the label's: numbers
    are regressed, anything else classified."""
    if task != "auto":
        return task
    if objective:
        return "classifier" if objective.startswith(CLASSIFIER_OBJECTIVE_PREFIXES) else "regressor"
    return "regressor" if values.dtype.kind in "iuf" else "classifier"


def check_not_null(name: str, values: np.ndarray, source: str) -> None:
    """A :class:`ModelError` if the LABEL column ``name`` read by ``source`` has NULLs, or
    numbers that are infinite or beyond float32's range (models compute in float32)."""
    if values.dtype.kind == "f":
        nulls = int(np.isnan(values).sum())
    elif values.dtype == object:
        nulls = sum(value is None or value != value for value in values.tolist())  # NaN != NaN
    else:
        nulls = 0
    if nulls:
        raise ModelError(
            f"LABEL column {name} has NULL (or NaN) values in {nulls} of {len(values)} rows",
            hint=f"filter them out: add WHERE {name} IS NOT NULL to {source}",
        )
    if values.dtype.kind == "f":
        huge = int((np.abs(values) > FLOAT32_MAX).sum())
        if huge:
            raise ModelError(
                f"LABEL column {name} has infinite values, or values beyond float32's range "
                f"(±{FLOAT32_MAX:.4g}), in {huge} of {len(values)} rows",
                hint=f"filter them out in {source}, e.g. WHERE {name} BETWEEN -1e38 AND 1e38",
            )


def queries(
    columns: Columns, attributes: Mapping[str, Any], source: str, ranks: bool
) -> np.ndarray | None:
    """Each row of ``source`` as its query's id for a model that ``ranks`` (as its family
    says): by ``train.group_column``, or without it all in one query (as SQLFlow trains its
    rankers: they then order all the rows as one query); None for a model that does not."""
    if not ranks:
        return None
    group = attributes.get("train.group_column")
    if group is None:
        return one_query(len(next(iter(columns.values()), ())))
    return query_ids(columns, group, source)


def one_query(rows: int) -> np.ndarray:
    """The query ids of ``rows`` rows that are all one query."""
    return np.zeros(rows, dtype=np.int64)


def query_ids(columns: Columns, group: str, source: str) -> np.ndarray:
    """The query of each row as an id (ids ordered like the query values' text): the
    ranking group column ``group`` of ``source``'s rows."""
    if group not in columns:
        raise ModelError(
            f"train.group_column {group} is not in the result of {source}",
            hint=f"{source} returns: {', '.join(columns)}",
        )
    texts = value_texts(columns[group])
    if None in texts:
        raise ModelError(
            f"train.group_column {group} has NULL values",
            hint=f"filter them out: add WHERE {group} IS NOT NULL to {source}",
        )
    return np.unique(np.array(texts, dtype=object), return_inverse=True)[1].reshape(-1)


def check_label(label: str, columns: Columns, source: str) -> None:
    """A :class:`ModelError` unless ``source`` returns the LABEL column (if there is one)."""
    if label and label not in columns:
        raise ModelError(
            f"LABEL column {label} is not in the result of {source}",
            hint=f"{source} returns: {', '.join(columns)}",
        )


def encode_label(labels: LabelEncoding, name: str, values: np.ndarray, source: str) -> np.ndarray:
    """The LABEL column ``name`` read by ``source``, encoded like a trained model's labels.

    Classes the model lacks are an error: it could never predict them.
    """
    check_not_null(name, values, source)
    if labels.task == "regressor" and values.dtype.kind not in "biuf":
        raise ModelError(
            f"LABEL column {name} of {source} holds text, but the model is a regressor",
            hint=f"select numbers as {name}",
        )
    unknown = labels.unknown(values)
    if unknown:
        raise ModelError(
            f"LABEL column {name} of {source} has classes the model does not know: "
            f"{', '.join(map(repr, unknown[:5]))}",
            hint=f"the model's classes are {', '.join(map(repr, labels.classes))}; "
            f"filter the other rows out of {source}",
        )
    return labels.encode(values)
