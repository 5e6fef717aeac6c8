"""TO TRAIN's rows read at once: the SELECT (through the input cache) and the validation rows,
those of ``validation.select`` or a seeded draw of ``validation.split`` of the SELECT's rows
(per class for classifiers, whole queries for rankers), held out of training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns
from sqlml.models.registry import family
from sqlml.runtime.cache import cached_read
from sqlml.runtime.context import Context
from sqlml.runtime.labels import LabelEncoding, check_label, encode_label, queries
from sqlml.runtime.rows import blame, check_rows, named_columns, spelled


@dataclass(frozen=True)
class Rows:
    """Rows to train on or to validate with: their columns, encoded labels and, for rankers,
    the query of each row (as ids)."""

    columns: Columns
    y: np.ndarray
    groups: np.ndarray | None

    def take(self, index: np.ndarray) -> Rows:
        return Rows(
            {name: values[index] for name, values in self.columns.items()},
            self.y[index],
            None if self.groups is None else self.groups[index],
        )


@dataclass(frozen=True)
class Split:
    """The training rows, the validation rows (None: no validation) and how they were chosen
    (``how``: ``validation.select``'s, or the split's share and seed)."""

    training: Rows
    validation: Rows | None
    how: dict[str, Any] | None

    @property
    def sample(self) -> Columns:
        """The rows features are derived from: the training rows."""
        return self.training.columns


@dataclass(frozen=True)
class InMemory:
    """The SELECT's rows, read whole."""

    statement: ir.TrainStatement
    context: Context
    sample: Columns  # every row

    def label_values(self, task: str) -> np.ndarray:
        """The LABEL column, whose values a label encoding is fitted to."""
        return self.sample[self.statement.label]

    def split(self, labels: LabelEncoding) -> Split:
        """The rows labelled by ``labels``, the validation rows held out of them or read."""
        label, attributes = self.statement.label, self.statement.attributes
        y = encode_label(labels, label, self.sample[label], "the SELECT")
        ranks = family(self.statement.family).ranks(attributes)
        rows = Rows(self.sample, y, queries(self.sample, attributes, "the SELECT", ranks))
        select = attributes.get("validation.select")
        if select is not None:
            return Split(
                rows, _read_validation(self.statement, self.context, labels), {"select": select}
            )
        share, seed = attributes["validation.split"], attributes["validation.seed"]
        if not share:
            return Split(rows, None, None)
        if rows.groups is None or not rows.groups.any():  # no queries, or one: hold out rows
            kept, held = split(rows.y, labels.task == "classifier", share, seed)
        else:
            kept, held = split_queries(rows.groups, share, seed)
        if not len(held):
            return Split(rows, None, None)
        return Split(rows.take(kept), rows.take(held), {"split": share, "seed": seed})


def read(statement: ir.TrainStatement, context: Context) -> InMemory:
    """The SELECT's rows, checked to hold some and the LABEL column."""
    read = cached_read(context.datasource, statement.select, context.reporter, context.fingerprints)
    columns = spelled(read, statement_columns(statement))
    check_rows(columns)
    check_label(statement.label, columns, "the SELECT")
    return InMemory(statement, context, columns)


def _read_validation(statement: ir.TrainStatement, context: Context, labels: LabelEncoding) -> Rows:
    """The rows of ``validation.select``, labelled by ``labels``."""
    select, label = statement.attributes["validation.select"], statement.label
    with blame("validation.select"):
        read = cached_read(context.datasource, select, context.reporter, context.fingerprints)
        columns = spelled(read, statement_columns(statement))
        check_rows(columns)
    check_label(label, columns, "validation.select")
    y = encode_label(labels, label, columns[label], "validation.select")
    ranks = family(statement.family).ranks(statement.attributes)
    return Rows(columns, y, queries(columns, statement.attributes, "validation.select", ranks))


def statement_columns(statement: ir.TrainStatement) -> list[str]:
    """The columns a training names: its features', its label, its query column."""
    group = statement.attributes.get("train.group_column")
    return named_columns(statement.features, statement.label, group)


def split(y: np.ndarray, stratify: bool, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and the held-out rows: ``share`` of the rows, drawn with
    ``seed`` (of each class's rows with ``stratify``), in their original order.

    Every class (and any set of rows) keeps at least one training row.
    """
    order = np.random.default_rng(seed).permutation(len(y))
    bounds = np.zeros(0, dtype=np.int64)
    if stratify:  # by class, in random order within each class
        order = order[np.argsort(y[order], kind="stable")]
        bounds = np.flatnonzero(np.diff(y[order])) + 1
    held = np.zeros(len(y), dtype=bool)
    for group in np.split(order, bounds):
        held[group[: min(round(share * len(group)), len(group) - 1)]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def split_queries(groups: np.ndarray, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and the held-out rows: those of ``share`` of the queries,
    drawn with ``seed``, in their original order. At least one query is kept for training."""
    queries = np.random.default_rng(seed).permutation(np.unique(groups))
    count = min(round(share * len(queries)), len(queries) - 1)
    held = np.isin(groups, queries[:count])
    return np.flatnonzero(~held), np.flatnonzero(held)
