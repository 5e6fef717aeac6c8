"""A stored model applied to the rows of a SELECT: loaded and checked once, its features
applied to the rows, ready to score. What TO PREDICT, TO EVALUATE and TO EXPLAIN's handlers
share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns, Datasource
from sqlml.errors import ModelError
from sqlml.models import Family, Trainer, family
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime import label_lists
from sqlml.runtime.cells import value_texts
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.progress import Progress
from sqlml.runtime.rows import SCORE_BATCH, check_rows, named_columns, spelled


@dataclass(frozen=True)
class Applied:
    """A stored model next to the features of a SELECT's rows, for the statement running
    in ``context``."""

    context: Context
    model: StoredModel
    family: Family
    trainer: Trainer
    labels: LabelEncoding
    columns: Columns
    features: FeatureArrays

    @property
    def metadata(self) -> dict[str, Any]:
        return self.model.metadata

    def scores(
        self,
        features: FeatureArrays | None = None,
        batch_size: int = SCORE_BATCH,
        counted: bool = True,
    ) -> np.ndarray:
        """Class probabilities (classifiers) or values (regressors) for ``features`` or the
        rows, from the model loaded anew (a scorer may keep state across its batches); the
        rows scored advance the current progress stage if ``counted`` (an explainer scoring
        mixed or shuffled rows reports its own units)."""
        features = self.features if features is None else features
        context = self.context
        if not counted:
            context = dataclasses.replace(context, reporter=Progress())
        score = self.trainer.scorer(context, self.model.data, self.metadata)
        return score(features, batch_size)

    def truth(self, label: str) -> np.ndarray:
        """The label column encoded like the training labels (its text of several values a
        row read as numbers, rows x n, for a model of several)."""
        from sqlml.runtime.labels import check_label, encode_label

        columns = spelled(self.columns, [label])
        check_label(label, columns, "the SELECT")
        values, width = columns[label], label_lists.width(self.metadata["attributes"])
        if width > 1:
            values = label_lists.parse(label, values, width, "the SELECT")
        return encode_label(self.labels, label, values, "the SELECT")

    def class_names(self) -> list[str]:
        """The classes as the plots name them."""
        return [str(c) for c in value_texts(np.array(self.labels.classes, dtype=object))]


def apply(
    model_name: str, select: str, context: Context, version: int | str | None = None
) -> Applied:
    """Load ``version`` of ``model_name`` (a number or an alias; None: the newest) and the
    features of ``select``'s rows."""
    model = load_model(model_name, context.datasource, version)
    columns = spelled(context.datasource.read(select, context.reporter), model_columns(model))
    check_rows(columns)
    return Applied(
        context,
        model.stored,
        model.family,
        model.trainer,
        model.labels,
        columns,
        transform(columns, model.features),
    )


@dataclass(frozen=True)
class Model:
    """A stored model, ready to score: its family and trainer, feature columns and labels."""

    stored: StoredModel
    family: Family
    trainer: Trainer
    features: list[ir.FeatureColumn]
    labels: LabelEncoding

    def predicted(self, scores: np.ndarray) -> np.ndarray:
        """What TO PREDICT writes for ``scores``: the likeliest class as the label's value
        (classifiers), or the value; a label of several values a row as one text."""
        classifier = self.labels.task == "classifier"
        values = np.asarray(self.labels.decode(scores.argmax(axis=1) if classifier else scores))
        return label_lists.texts(values) if values.ndim == 2 else values


def model_columns(model: Model) -> list[str]:
    """The columns a stored model reads: its features', its label, its query column."""
    metadata = model.stored.metadata
    group = metadata["attributes"].get("train.group_column")
    return named_columns(model.features, metadata["label"], group)


def load_model(model_name: str, datasource: Datasource, version: int | str | None = None) -> Model:
    """Version ``version`` of the model (a number or an alias; None: the newest), ready to
    score."""
    stored = ModelStore(datasource).load(model_name, version)
    model_family = family(stored.metadata["family"])
    if stored.metadata["format"] != model_family.format:
        raise ModelError(
            f"model {model_name} is stored as {stored.metadata['format']}, "
            "which this version of sqlml cannot read"
        )
    features = [ir.FeatureColumn.from_dict(f) for f in stored.metadata["features"]]
    labels = LabelEncoding.from_dict(stored.metadata["labels"])
    return Model(stored, model_family, model_family.trainer(), features, labels)
