"""What the families that compile their models into SQL share (:meth:`Family.to_sql`): the
feature columns such SQL reads (those of every kind: :mod:`sqlml.models.compiled_features`),
numbers as exact literals, comparisons as float32, and a label's classes.

Expressions are sqlglot's, built without a dialect; ``sqlml export --format sql`` renders
them in the datasource's (or the chosen) dialect, which quotes names and spells functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlml import ir
from sqlml.errors import ModelError

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

NOT_COMPILED_HINT = (
    "score it with TO PREDICT, or export it in its library's format (sqlml export MODEL FILE)"
)


def numeric_columns(stored: StoredModel) -> list[str]:
    """The columns ``stored``'s features read, each one number a row (plain NUMERIC feature
    columns); a :class:`ModelError` naming the first feature column of another kind, which
    sqlml does not compile into SQL yet."""
    types = stored.metadata.get("column_types") or {}
    columns = []
    for feature in stored.metadata["features"]:
        column, kind = feature.get("column"), feature["kind"]
        shape = feature.get("params", {}).get("shape")
        what = None
        if kind != "numeric" or column is None:
            what = f"a {kind.upper()} column"
        elif shape != 1:
            what = f"a NUMERIC column of shape {shape}"
        elif types.get(column) == "text":
            what = "a NUMERIC column reading numbers from text"
        if what:
            raise ModelError(
                f"model {stored.name} cannot be compiled into SQL: its feature column "
                f"{ir.FeatureColumn.from_dict(feature).name} is {what}, and only plain numeric "
                "columns "
                "compile so far",
                hint=NOT_COMPILED_HINT,
            )
        columns.append(column)
    return columns


def feature(column: str) -> exp.Expression:
    """A feature column read as a double (NULL stays NULL: a missing value)."""
    return exp.cast(exp.column(column, quoted=True), exp.DataType.Type.DOUBLE)


def float32_below(
    x: exp.Expression, threshold: np.float32, negated: bool = False
) -> exp.Expression:
    """Whether the double ``x`` as a float32 (rounded to nearest, ties to even; infinite
    beyond float32's range) is below ``threshold`` (a float32, infinite too): whether it is
    at most the float32 below it once rounded; with ``negated``, whether it is not. NULL
    (or false) for a NULL ``x``."""
    with np.errstate(over="ignore"):
        below = np.nextafter(threshold, np.float32(-np.inf))
    if not math.isfinite(float(below)):  # no float32 is below the threshold
        return exp.not_(exp.Is(this=x.copy(), expression=exp.Null())) if negated else exp.false()
    top = float(threshold) if math.isfinite(float(threshold)) else 2.0**128  # overflows
    middle = (float(below) + top) / 2  # exact in a double
    even = int(np.array(below, dtype=np.float32).view(np.uint32)) % 2 == 0  # ties go to it
    if negated:
        return (exp.GT if even else exp.GTE)(this=x.copy(), expression=number(middle))
    return (exp.LTE if even else exp.LT)(this=x.copy(), expression=number(middle))


def number(value: float) -> exp.Expression:
    """``value`` as a literal that every database reads back as the same double (Python's
    shortest round-trip text); sqlglot writes a space between operators (``1 - -2``)."""
    if not math.isfinite(value):
        raise ModelError(f"a model's number {value} cannot be written in SQL")
    literal = exp.Literal.number(repr(float(abs(value))))
    return exp.Neg(this=literal) if math.copysign(1, value) < 0 else literal


def total(terms: Sequence[exp.Expression]) -> exp.Expression:
    """The sum of ``terms`` (at least one), in pairs of pairs: an expression as deep as the
    logarithm of the terms (DuckDB and SQLite refuse one deeper than 1,000, as a left-deep
    sum of a thousand trees would be)."""
    summed = list(terms)
    while len(summed) > 1:
        pairs = zip(summed[0::2], summed[1::2], strict=False)
        paired = [exp.Paren(this=exp.Add(this=a, expression=b)) for a, b in pairs]
        summed = paired + summed[len(paired) * 2 :]
    return summed[0]


def class_value(value: Any) -> exp.Expression:
    """A label's class as a SQL literal of its type (text, integer, number or boolean): an
    integer class (a cluster's id, a class id) is read back as an integer, as TO PREDICT
    writes it, not as ``2.0``."""
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        literal = exp.Literal.number(str(abs(value)))
        return exp.Neg(this=literal) if value < 0 else literal
    if isinstance(value, float):
        return number(value)
    return exp.Literal.string(str(value))


def argmax(values: Sequence[exp.Expression], classes: Sequence[Any]) -> exp.Expression:
    """The class of the greatest of ``values`` (one per class; the first on ties, as numpy's
    argmax), a ``CASE``."""
    ifs = [
        exp.If(
            this=exp.and_(
                *(exp.GTE(this=mine.copy(), expression=other.copy()) for other in values[i + 1 :])
            ),
            true=class_value(classes[i]),
        )
        for i, mine in enumerate(values[:-1])
    ]
    return exp.Case(ifs=ifs, default=class_value(classes[-1]))


def sigmoid(margin: exp.Expression) -> exp.Expression:
    """``1 / (1 + EXP(-margin))``."""
    return exp.Div(
        this=exp.Literal.number(1),
        expression=exp.Paren(
            this=exp.Add(
                this=exp.Literal.number(1),
                expression=exp.Exp(this=exp.Neg(this=exp.Paren(this=margin))),
            )
        ),
    )


def softmax(margins: Sequence[exp.Expression]) -> list[exp.Expression]:
    """Each class's probability from the margins, as ``1 / SUM(EXP(m_j - m_i))`` (no
    overflow for the likeliest class; the SQL grows as the square of the classes)."""
    return [
        exp.Div(
            this=exp.Literal.number(1),
            expression=exp.Paren(
                this=total(
                    [
                        exp.Literal.number(1)
                        if j == i
                        else exp.Exp(
                            this=exp.Sub(this=other.copy(), expression=exp.Paren(this=mine.copy()))
                        )
                        for j, other in enumerate(margins)
                    ]
                )
            ),
        )
        for i, mine in enumerate(margins)
    ]


def nearest(
    distances: Sequence[exp.Expression], clusters: Sequence[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """The cluster of the least of ``distances`` (squared, one per cluster; the first on
    ties), and each cluster's soft assignment as TO PREDICT gives it (Student's t kernel,
    ``1 / (1 + d)`` normalised over the clusters)."""
    chosen = (
        argmax([exp.Neg(this=exp.Paren(this=d.copy())) for d in distances], clusters)
        if len(clusters) > 1
        else class_value(clusters[0])
    )
    kernels = [
        exp.Div(
            this=exp.Literal.number(1),
            expression=exp.Paren(this=exp.Add(this=exp.Literal.number(1), expression=d)),
        )
        for d in distances
    ]
    scores = {
        str(cluster): exp.Div(
            this=kernel, expression=exp.Paren(this=total([k.copy() for k in kernels]))
        )
        for cluster, kernel in zip(clusters, kernels, strict=True)
    }
    return chosen, scores
