"""TO TRAIN's rows with ``train.external_memory = true``: the SELECT streamed in batches, so
data larger than memory trains (XGBoost from ``xgboost.DataIter`` with its cache files in a
temporary folder; Keras from ``tf.data``).

The first pass over the data reads the SELECT batch by batch; XGBoost's later passes and
Keras's later epochs read the first pass's batches from local disk (:mod:`sqlml.runtime.spool`).
- Feature columns (kinds, vocabularies, shapes) and Keras's normalisation are derived from a
  sample: ``SAMPLE_ROWS`` rows, the first the database returns (the SELECT with a LIMIT, so
  the database stops there). Category values not in the sample fall in the out-of-vocabulary
  bucket.
- The classes of a classifier's label come from the database: ``SELECT DISTINCT`` label.
- ``validation.split`` holds out a seeded draw of each batch's rows (not stratified);
  ``validation.select`` streams too. The held-out rows are scored after training, in one
  more pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns, Datasource
from sqlml.datasources.arrays import join_batches
from sqlml.errors import ModelError
from sqlml.models.registry import family
from sqlml.runtime.context import Context
from sqlml.runtime.in_memory import statement_columns
from sqlml.runtime.labels import LabelEncoding, check_label, encode_label
from sqlml.runtime.rows import check_rows, spelled

SAMPLE_ROWS = 100_000
# Rows per batch, and so per XGBoost page: memory holds about one batch; bigger pages train
# faster (1,000,000 rows x 10 columns: 30 s of CPU with 262,144-row pages, 47 s with 65,536).
BATCH_ROWS = 262_144


@dataclass
class Batches:
    """The training rows' batches, pass after pass, and the validation rows' (one pass);
    ``sample`` (labelled ``sample_y``) is what features are derived from."""

    statement: ir.TrainStatement
    datasource: Datasource
    sample: Columns
    sample_y: np.ndarray
    rows: int = 0  # training rows counted by the latest pass

    @property
    def how(self) -> dict[str, Any] | None:
        return held_out(self.statement.attributes)

    def training(self) -> Iterator[Columns]:
        """One pass over the training rows (those not held out), in batches."""
        self.rows = 0
        for columns in self._draw(held=False):
            self.rows += len(columns[self.statement.label])
            yield columns

    def validation(self) -> Iterator[Columns]:
        """One pass over the validation rows, in batches (``validation.select``'s: each one)."""
        select = self.statement.attributes.get("validation.select")
        if select:
            with closing(self.datasource.read_batches(select, BATCH_ROWS)) as stream:
                names = statement_columns(self.statement)
                yield from (spelled(batch, names) for batch in stream)
        elif self.statement.attributes["validation.split"]:
            yield from self._draw(held=True)

    def _draw(self, held: bool) -> Iterator[Columns]:
        """The SELECT's batches, of their held-out rows (``held``) or the others; none empty."""
        attributes = self.statement.attributes
        share = 0.0 if attributes.get("validation.select") else attributes["validation.split"]
        with closing(self.datasource.read_batches(self.statement.select, BATCH_ROWS)) as stream:
            for index, read in enumerate(regrouped(stream, BATCH_ROWS)):
                columns = spelled(read, statement_columns(self.statement))
                chosen = _held(index, columns, share, attributes["validation.seed"])
                rows = {name: values[chosen == held] for name, values in columns.items()}
                if len(rows[self.statement.label]):
                    yield rows


@dataclass(frozen=True)
class Stream:
    """The SELECT, read batch by batch, and its first ``SAMPLE_ROWS`` rows."""

    statement: ir.TrainStatement
    context: Context
    sample: Columns

    def label_values(self, task: str) -> np.ndarray:
        """The values a label encoding is fitted to: a classifier's every distinct LABEL value
        (read from the database), else the sample's."""
        label = self.statement.label
        if task != "classifier":
            return self.sample[label]
        datasource = self.context.datasource
        column = datasource.quote([label])
        distinct = datasource.read(
            f"SELECT DISTINCT {column} FROM ({self.statement.select}) AS sqlml_rows",
            self.context.reporter,
        )
        return next(iter(distinct.values()))

    def split(self, labels: LabelEncoding) -> Batches:
        """The training and the validation rows' batches, the sample labelled by ``labels``."""
        label = self.statement.label
        sample_y = encode_label(labels, label, self.sample[label], "the SELECT")
        return Batches(self.statement, self.context.datasource, self.sample, sample_y)


def read(statement: ir.TrainStatement, context: Context) -> Stream:
    """The SELECT to stream, its sample checked to hold rows and the LABEL column."""
    if family(statement.family).ranks(statement.attributes):
        raise ModelError(
            "train.external_memory cannot train rankers (rank:* objectives): each query's "
            "rows must be together in memory",
            hint="leave out train.external_memory",
        )
    return stream(statement, context)


def stream(statement: ir.TrainStatement, context: Context) -> Stream:
    """The SELECT to stream (a ranker's too), its sample checked to hold rows and the LABEL
    column."""
    sample = spelled(_sample(context.datasource, statement.select), statement_columns(statement))
    check_rows(sample)
    check_label(statement.label, sample, "the SELECT")
    return Stream(statement, context, sample)


def held_out(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """How the validation rows are chosen, as the model's metadata records it:
    ``validation.select``, a split, or none."""
    if attributes.get("validation.select"):
        return {"select": attributes["validation.select"]}
    if attributes["validation.split"]:
        return {"split": attributes["validation.split"], "seed": attributes["validation.seed"]}
    return None


def _sample(datasource: Datasource, select: str) -> Columns:
    """``SAMPLE_ROWS`` rows of ``select``: its columns, empty if it has no rows. The LIMIT
    lets the database stop: MySQL's protocol cannot end a result early but by reading it
    whole (a scan of the rows, 4 to 7 s at 4,000,000)."""
    limited = f"SELECT * FROM ({select}\n) AS sqlml_rows LIMIT {SAMPLE_ROWS}"
    with closing(datasource.read_batches(limited, BATCH_ROWS)) as stream:
        return join_batches(list(stream))


def regrouped(batches: Iterator[Columns], rows: int) -> Iterator[Columns]:
    """``batches`` joined into batches of ``rows`` rows (the last may have fewer): a reader's
    batches can be smaller (PostgreSQL's and MySQL's are a few MiB), and XGBoost trains
    slower on smaller pages."""
    held: list[Columns] = []
    count = 0
    for batch in batches:
        held.append(batch)
        count += len(next(iter(batch.values()), ()))
        while count >= rows:
            joined = join_batches(held)
            yield {name: values[:rows] for name, values in joined.items()}
            count -= rows
            held = [{name: values[rows:] for name, values in joined.items()}] if count else []
    if held:
        yield join_batches(held)


def _held(index: int, columns: Columns, share: float, seed: int) -> np.ndarray:
    """Which rows of batch ``index`` are held out: a draw seeded by ``seed`` and the batch."""
    rows = len(next(iter(columns.values())))
    if not share:
        return np.zeros(rows, dtype=bool)
    return np.random.default_rng([seed, index]).random(rows) < share
