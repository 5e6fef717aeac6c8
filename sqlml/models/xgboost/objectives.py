"""XGBoost's learning objectives, by the task each learns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLASSIFICATION_OBJECTIVES = (
    "binary:logistic",
    "binary:logitraw",
    "binary:hinge",
    "multi:softmax",
    "multi:softprob",
)
REGRESSION_OBJECTIVES = (
    "reg:squarederror",
    "reg:squaredlogerror",
    "reg:logistic",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
)
# Learning to rank: the rows of a query (train.group_column) are ordered by relevance.
RANKING_OBJECTIVES = ("rank:pairwise", "rank:ndcg", "rank:map")
XGBOOST_OBJECTIVES = REGRESSION_OBJECTIVES + CLASSIFICATION_OBJECTIVES + RANKING_OBJECTIVES


def ranks(attributes: Mapping[str, Any]) -> bool:
    """Whether a training with these attributes learns to rank: a rank:* objective, or a
    query column (which only rankers take). Without a query column every row is one query."""
    return (
        attributes.get("objective") in RANKING_OBJECTIVES
        or attributes.get("train.group_column") is not None
    )


def one_query_warning(ranker: str) -> str:
    """The warning of a ranker (``XGBRanker``, ``objective rank:ndcg``) trained without a
    query column: every row is one query, as SQLFlow trains it."""
    return (
        f"{ranker} without train.group_column ranks every row as one query, as SQLFlow "
        "does; add train.group_column = '<column>' to rank the rows of each query"
    )


# The objectives sqlml uses when none is given, by the estimator's task: a classifier's
# follows its classes, an XGBoost booster's ("auto") its label too: text or boolean labels
# make a classifier, numbers a regressor.
OMITTED_OBJECTIVES = {
    "classifier": ("binary:logistic", "multi:softprob"),
    "regressor": ("reg:squarederror",),
    "auto": ("binary:logistic", "multi:softprob", "reg:squarederror"),
}
_WHEN = {
    "binary:logistic": "binary:logistic for two classes",
    "multi:softprob": "multi:softprob for more",
    "reg:squarederror": "reg:squarederror for numbers",
}


def omitted_objective_problem(metric: str, task: str) -> tuple[str, str] | None:
    """What is wrong with ``eval_metric = metric`` when the objective is omitted (and the
    training starts anew: a base model has its own), with what to do; None if fine.

    A metric of multi:* objectives only (mlogloss, merror) is a problem: the objective sqlml
    then uses follows the label, and its single-score ones (binary:logistic for two classes,
    reg:squarederror for numbers) cannot report it (XGBoost fails at the first round). The
    others are left to the label: a single-score metric suits two classes (logloss).
    """
    from sqlml.metrics import xgboost_eval_metric_problem  # numpy: not for every lookup

    omitted = OMITTED_OBJECTIVES.get(task, ())
    single = [o for o in omitted if not o.startswith("multi:")]
    if not single or xgboost_eval_metric_problem(metric, False) is None:
        return None
    given = f"eval_metric {metric} measures a multi:* objective, but no objective is given: "
    if "multi:softprob" not in omitted:
        return (
            f"{given}sqlml's then is {single[0]}, which cannot report {metric}",
            "use rmse or mae",
        )
    uses = ", ".join(_WHEN[o] for o in omitted)
    return (
        f"{given}sqlml's then follows the label ({uses}), and only multi:softprob reports {metric}",
        "set objective = 'multi:softprob' (or 'multi:softmax')",
    )
