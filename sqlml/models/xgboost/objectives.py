"""XGBoost's learning objectives, by the task each learns."""

from __future__ import annotations

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
