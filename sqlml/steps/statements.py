"""Steps that run sqlml statements: standard SQL, TO TRAIN, TO PREDICT, ASSERT..."""

from __future__ import annotations

from collections.abc import Sequence

from sqlml import ir
from sqlml.workflow.core import Step, names


def _step(statement: ir.Statement, after: Sequence[Step]) -> Step:
    return Step(statement.id, statement.kind, statement.to_dict(), names(after))


def statement(statement: ir.Statement, after: Sequence[Step] = ()) -> Step:
    """Run a statement of any kind with the handler its kind declares.

    Args:
        statement: the statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def sql(statement: ir.SqlStatement, after: Sequence[Step] = ()) -> Step:
    """Run a standard SQL statement in the datasource.

    Args:
        statement: the statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def train(statement: ir.TrainStatement, after: Sequence[Step] = ()) -> Step:
    """Train a model on the rows of a SELECT and save it in the datasource's model table.

    Args:
        statement: the TO TRAIN statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def predict(statement: ir.PredictStatement, after: Sequence[Step] = ()) -> Step:
    """Predict the rows of a SELECT with a stored model into a table (replaced atomically).

    Args:
        statement: the TO PREDICT statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def evaluate(statement: ir.EvaluateStatement, after: Sequence[Step] = ()) -> Step:
    """Score a stored model on the rows of a SELECT and write the metrics to a table.

    Args:
        statement: the TO EVALUATE statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def explain(statement: ir.ExplainStatement, after: Sequence[Step] = ()) -> Step:
    """Compute per-feature attributions of a stored model on the rows of a SELECT.

    Args:
        statement: the TO EXPLAIN statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def model_admin(
    statement: ir.ShowTrainStatement
    | ir.ShowModelsStatement
    | ir.DescribeModelStatement
    | ir.DropModelStatement,
    after: Sequence[Step] = (),
) -> Step:
    """SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL or DROP MODEL on the datasource's model store.

    Args:
        statement: the statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)


def assertion(statement: ir.AssertStatement, after: Sequence[Step] = ()) -> Step:
    """Fail unless an ASSERT's condition holds on the data.

    Args:
        statement: the ASSERT statement's IR.
        after: steps that must finish first.
    """
    return _step(statement, after)
