"""The checks of a TO TRAIN of an XGBoost estimator that its attributes' schemas cannot
make: ``eval_metric`` against the objective, ``train.workers`` against what needs every row
in one process, and a ranker's query column."""

from __future__ import annotations

from typing import Any

from sqlml.models.estimator import Estimator, warn
from sqlml.models.xgboost.objectives import (
    RANKING_OBJECTIVES,
    eval_metric_problem,
    omitted_objective_problem,
    one_query_warning,
)
from sqlml.semantics.attributes import own_name
from sqlml.semantics.lowering import error, value_start
from sqlml.statements.train.syntax import TrainNode


def check_training(statement: TrainNode, estimator: Estimator, attributes: dict[str, Any]) -> None:
    """``eval_metric``, ``train.workers`` and, training anew, the ranking's query column."""
    _check_eval_metric(statement, attributes, estimator.task_for(attributes))
    _check_workers(statement, estimator, attributes)
    if statement.using is None:
        _check_ranking(statement, attributes)


def _check_eval_metric(statement: TrainNode, attributes: dict[str, Any], task: str) -> None:
    """XGBoost's ``eval_metric``: one of its metrics that the objective (the one sqlml uses
    for ``task`` when omitted) reports, else an error at the value."""
    value, objective = attributes.get("eval_metric"), attributes.get("objective")
    multiclass = None if objective is None else str(objective).startswith("multi:")
    problem = None if value is None else eval_metric_problem(value, multiclass)
    if problem is None and value is not None and objective is None and statement.using is None:
        problem = omitted_objective_problem(value, task)
    if problem is not None:
        given = next(a for a in statement.attributes if a.name == "eval_metric")
        raise error(problem[0], value_start(statement, given), problem[1])


def _check_workers(statement: TrainNode, estimator: Estimator, attributes: dict[str, Any]) -> None:
    """XGBoost's ``train.workers`` above 1 (several processes, each with a part of the
    rows): not with what needs every row in one process."""
    if (attributes.get("train.workers") or 1) <= 1:
        return
    given = {own_name(a.name, estimator.attributes): a for a in statement.attributes}
    workers = given["train.workers"]
    hint = f"leave out {workers.name} to train in one process"
    if attributes.get("train.external_memory"):
        memory = given["train.external_memory"]
        raise error(
            f"{workers.name} trains each worker on its part of the rows in memory, not on "
            f"streamed batches ({memory.name})",
            memory.pos,
            f"remove {memory.name}: each of the workers holds 1/{attributes['train.workers']} "
            "of the rows",
        )
    if statement.using is not None:
        raise error(
            f"{workers.name} trains a new model: continuing USING {statement.using} trains "
            "in one process",
            statement.using.pos,
            hint,
        )
    if attributes.get("tree_method") == "exact":
        raise error(
            f"{workers.name}: XGBoost's exact tree method trains in one process only",
            given["tree_method"].pos,
            "use tree_method = 'hist' (or 'approx'), or " + hint,
        )
    ranking = attributes.get("objective") in RANKING_OBJECTIVES
    if ranking and "train.group_column" not in attributes:
        raise error(
            f"{workers.name} splits the rows among workers, but a ranker without "
            "train.group_column ranks every row as one query",
            workers.pos,
            "add train.group_column (each query stays with one worker), or " + hint,
        )


def _check_ranking(statement: TrainNode, attributes: dict[str, Any]) -> None:
    """train.group_column needs a rank:* objective; a rank:* objective without it ranks
    every row as one query, with a warning."""
    ranking = attributes.get("objective") in RANKING_OBJECTIVES
    given = {attribute.name: attribute for attribute in statement.attributes}
    if ranking and "train.group_column" not in attributes:
        ranker = given.get("objective")
        where = ranker.pos if ranker else statement.estimator.pos
        name = f"objective {attributes['objective']}" if ranker else str(statement.estimator)
        warn(where.line, where.column, one_query_warning(name))
    if not ranking and "train.group_column" in attributes:
        raise error(
            "train.group_column is for ranking",
            given["train.group_column"].pos,
            "add objective = 'rank:ndcg' (or rank:pairwise, rank:map), or remove it",
        )
