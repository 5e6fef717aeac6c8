"""XGBoost's learning objectives, by the task each learns, and its own training metrics
(``eval_metric``)."""

from __future__ import annotations

import difflib
import re
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


# The task of each objective's prefix.
_PREFIX_TASKS = {
    "binary": "classifier",
    "multi": "classifier",
    "reg": "regressor",
    "count": "regressor",
    "rank": "ranker",
}


def task(objective: object) -> str | None:
    """The task ``objective`` (one of XGBoost's, or None) learns; None for None."""
    return _PREFIX_TASKS.get(str(objective).partition(":")[0])


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
    omitted = OMITTED_OBJECTIVES.get(task, ())
    single = [o for o in omitted if not o.startswith("multi:")]
    if not single or eval_metric_problem(metric, False) is None:
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


# XGBoost's own training metrics (its eval_metric parameter); @ and - forms are matched below.
EVAL_METRICS = (
    "rmse", "rmsle", "mae", "mape", "mphe", "logloss", "error", "merror", "mlogloss", "auc",
    "aucpr", "pre", "ndcg", "map", "poisson-nloglik", "gamma-nloglik", "cox-nloglik",
    "gamma-deviance", "tweedie-nloglik", "aft-nloglik", "interval-regression-accuracy",
)  # fmt: skip
_EVAL_FORMS = re.compile(r"(?:error|tweedie-nloglik)@\d*\.?\d+|(?:pre|ndcg|map)(?:@\d+)?-?")


# The XGBoost metrics of a multi:* objective, and those that need one.
MULTICLASS_METRICS = ("merror", "mlogloss", "auc", "aucpr")
_NEEDS_MULTICLASS = ("merror", "mlogloss")


def eval_metric_problem(value: str, multiclass: bool | None) -> tuple[str, str] | None:
    """What is wrong with an XGBoost ``eval_metric`` value (and what to do); None if fine.
    ``multiclass``: whether the objective is a multi:* one (None: not known yet)."""
    if value.lower() == "accuracy_score":
        return _accuracy_problem(multiclass)
    if value not in EVAL_METRICS and not _EVAL_FORMS.fullmatch(value):
        close = difflib.get_close_matches(value.lower(), EVAL_METRICS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        return (
            f"eval_metric {value} is not one of XGBoost's metrics",
            f"{hint}XGBoost's are {', '.join(EVAL_METRICS)} (error@0.6, ndcg@5, pre@3, "
            "map@5- and tweedie-nloglik@1.5 too)",
        )
    if multiclass is True and value not in MULTICLASS_METRICS:
        return (
            f"eval_metric {value} does not measure a multi:* objective's class probabilities",
            f"use one of {', '.join(MULTICLASS_METRICS)}",
        )
    if multiclass is False and value in _NEEDS_MULTICLASS:
        return (
            f"eval_metric {value} measures a multi:* objective; this objective is not one",
            "use logloss or error for binary:*, rmse or mae for reg:*",
        )
    return None


def _accuracy_problem(multiclass: bool | None) -> tuple[str, str]:
    """``eval_metric = accuracy_score`` (SQLFlow's e2e tests write it): scikit-learn's name,
    which XGBoost refuses ("Unknown metric function"); its error rate is one minus it."""
    error = {True: "merror", False: "error"}.get(multiclass, "merror (error for binary:*)")
    return (
        "eval_metric accuracy_score is scikit-learn's accuracy, not an XGBoost metric: "
        f"XGBoost's nearest, {error}, is 1 - accuracy, which training lowers",
        "for the accuracy of the validation rows (stored with the model) write "
        "validation.metrics = 'accuracy_score'; for XGBoost's error each round, eval_metric = "
        f"'{error.split()[0]}'",
    )
