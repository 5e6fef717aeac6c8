"""What the families that compile their models into SQL share (:meth:`Family.to_sql`): the
feature columns such SQL reads, numbers as exact literals, and a label's classes.

Expressions are sqlglot's, built without a dialect; ``sqlml export --format sql`` renders
them in the datasource's (or the chosen) dialect, which quotes names and spells functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlml import ir
from sqlml.errors import ModelError

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

NOT_COMPILED_HINT = "export it in its library's format instead (sqlml export MODEL FILE.json)"


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


def number(value: float) -> exp.Expression:
    """``value`` as a literal that every database reads back as the same double (Python's
    shortest round-trip text); sqlglot writes a space between operators (``1 - -2``)."""
    if not math.isfinite(value):
        raise ModelError(f"a model's number {value} cannot be written in SQL")
    literal = exp.Literal.number(repr(float(abs(value))))
    return exp.Neg(this=literal) if math.copysign(1, value) < 0 else literal


def total(terms: Sequence[exp.Expression]) -> exp.Expression:
    """The sum of ``terms`` (at least one), left to right."""
    result = terms[0]
    for term in terms[1:]:
        result = exp.Add(this=result, expression=term)
    return result


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
