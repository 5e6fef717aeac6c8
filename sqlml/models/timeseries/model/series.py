"""Which series a row belongs to, and each series' next steps across the batches of rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.timeseries import arima
from sqlml.runtime.features_apply import FeatureArrays


def key_columns(attributes: dict[str, Any]) -> list[str]:
    """The series key columns ``model.series_key`` names (none: the rows are one series)."""
    given = attributes.get("model.series_key") or ""
    return [name.strip() for name in given.split(",") if name.strip()]


def date_column(features: FeatureArrays, keys: list[str]) -> str:
    """The feature that orders the series: the one not a key; a :class:`ModelError` unless
    the keys are features and one other is."""
    missing = [key for key in keys if key not in features.names]
    if missing:
        raise ModelError(
            f"model.series_key names {', '.join(missing)}, which the SELECT does not give as "
            f"features (they are {', '.join(features.names)})",
            hint="select the key columns beside the date and the LABEL, e.g. "
            "SELECT store, day, sales FROM ...",
        )
    others = [name for name in features.names if name not in keys]
    if len(others) != 1:
        raise ModelError(
            f"an ARIMA model takes one feature besides its series keys, the date that orders "
            f"the series; the SELECT gives {len(others)}: {', '.join(others) or 'none'}",
            hint="select only the date column, the LABEL and the model.series_key columns, "
            "e.g. SELECT time, purchase FROM ...",
        )
    return others[0]


def feature_values(features: FeatureArrays, index: int) -> np.ndarray:
    """Feature ``index``'s value in each row as float64 (a category's id, the rank of its
    text: vocabularies are sorted); NaN for NULL."""
    for categorical in features.categoricals:
        if categorical.feature == index:
            if categorical.ids.shape[1] != 1:
                break
            found = categorical.ids[:, 0].astype(np.float64)
            found[categorical.weights[:, 0] == 0] = np.nan
            return found
    columns = np.flatnonzero(features.owners == index)
    if len(columns) != 1:
        raise ModelError(
            f"the feature {features.names[index]} of an ARIMA model is not one value a row",
            hint="select the date and the series keys as plain columns",
        )
    return features.numbers[:, columns[0]].astype(np.float64)


def check_whole(features: FeatureArrays, names: list[str]) -> None:
    """A :class:`ModelError` if a training row's text in one of the features ``names`` is
    outside the feature's vocabulary (it keeps the 10,000 most frequent texts, or its
    bucket_size's), where it would share the last bucket with the others: series merged,
    dates out of order. (A CATEGORY_ID of integer ids has no such bucket; its largest id is
    refused too.)"""
    for categorical in features.categoricals:
        name = features.names[categorical.feature]
        if name in names and (categorical.ids == categorical.buckets - 1).any():
            raise ModelError(
                f"the column {name} holds more distinct values than its vocabulary keeps "
                f"({categorical.buckets - 1:,}): the others would be taken as one",
                hint=f"select {name} as a number (e.g. a date as days since a day, a key as "
                "an integer id), or as fewer distinct texts",
            )


def key_values(features: FeatureArrays, keys: list[str]) -> np.ndarray:
    """Each row's series key (rows x keys); a :class:`ModelError` if one is NULL."""
    found = np.column_stack(
        [np.zeros((features.rows, 0))]
        + [feature_values(features, features.names.index(key)) for key in keys]
    )
    if np.isnan(found).any():
        raise ModelError(
            f"a series key column ({', '.join(keys)}) holds NULL values",
            hint="fill or filter them in the SELECT",
        )
    return found


class Steps:
    """The forecasts of rows, each the next step of its series in the order the rows come,
    across the batches given to :meth:`forecast`."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.series = {tuple(one["key"]): i for i, one in enumerate(document["series"])}
        self.done = np.zeros(len(document["series"]), dtype=np.int64)
        self.rows = 0

    def forecast(self, features: FeatureArrays) -> tuple[np.ndarray, np.ndarray | None]:
        """Each row's forecast and, when the model knows its variance, standard error."""
        which = self.which(features)
        values, errors = np.empty(features.rows), np.empty(features.rows)
        all_series = self.document["series"]
        for index in np.unique(which):
            rows = np.flatnonzero(which == index)
            one, start = all_series[index], int(self.done[index])
            values[rows] = arima.forecast(one, len(rows), start)
            if one["variance"] is not None:
                errors[rows] = arima.standard_errors(one, len(rows), start)
            self.done[index] += len(rows)
        self.rows += features.rows
        known = all(one["variance"] is not None for one in all_series)
        return values, errors if known else None

    def which(self, features: FeatureArrays) -> np.ndarray:
        """The series (its index in the model) of each row."""
        keys = self.document["keys"]
        if not keys:
            return np.zeros(features.rows, dtype=np.int64)
        found = key_values(features, keys)
        which = np.array([self.series.get(key, -1) for key in map(tuple, found.tolist())])
        unknown = np.flatnonzero(which < 0)
        if len(unknown):
            raise ModelError(
                f"row {self.rows + int(unknown[0]) + 1} of the SELECT belongs to a series "
                f"({', '.join(keys)}) the model was not trained on",
                hint="select only the series the model was trained on",
            )
        return which
