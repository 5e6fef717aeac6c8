"""A k-means model compiled into portable SQL: each row's nearest centre, after the
standardisation the model stored (:mod:`.model`), read from its JSON document. Its
features are the columns of the matrix TO PREDICT makes
(:mod:`sqlml.models.compiled_features`, categories one-hot).

A NULL number is the training rows' mean (0 once standardised), as in TO PREDICT, and a
NULL category no category. Features are doubles here and float32 in TO PREDICT: a row about
equally far from two centres may go to the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlml.errors import ModelError
from sqlml.models import compiled, compiled_features
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.cluster.checks import kmeans_document
from sqlml.models.compiled import number, total
from sqlml.models.interface import CompiledModel

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

_NOTES = [
    "A NULL number counts as the training rows' mean, and a NULL category as no category, "
    "as in TO PREDICT.",
    "Features are read as doubles (float32 in TO PREDICT): a row about equally far from two "
    "centres may get the other.",
]


def compile_model(stored: StoredModel) -> CompiledModel:
    """The nearest centre's id (the first on ties), and each cluster's soft assignment
    (Student's t kernel, as TO PREDICT's probabilities)."""
    inputs = compiled_features.matrix(stored, one_hot=True)
    document = kmeans_document(stored.data)
    if len(document["mean"]) != len(inputs.values):
        raise ModelError(
            f"the stored k-means model takes {len(document['mean']):,} features, but its "
            f"feature columns make {len(inputs.values):,}",
            hint=TAMPERED_HINT,
        )
    standardised = [
        exp.Coalesce(
            this=exp.Div(
                this=exp.Paren(this=exp.Sub(this=value, expression=number(mean))),
                expression=number(scale),
            ),
            expressions=[exp.Literal.number(0)],
        )
        for value, mean, scale in zip(
            inputs.values, document["mean"], document["scale"], strict=True
        )
    ]
    distances = [
        total(
            [
                exp.Pow(
                    this=exp.Paren(this=exp.Sub(this=z.copy(), expression=number(c))),
                    expression=exp.Literal.number(2),
                )
                for z, c in zip(standardised, center, strict=True)
            ]
        )
        for center in document["centers"]
    ]
    classes = stored.metadata["labels"]["classes"]
    chosen, scores = compiled.nearest(distances, classes)
    return CompiledModel(inputs.columns, chosen, scores, _NOTES)
