"""Rankers (rank:* objectives) and their queries: ``train.group_column`` names the column
holding each row's query; without it every row is in one query, as SQLFlow trains its
XGBRanker (it gives XGBoost no query groups, and XGBoost then orders all the rows as one
query). sqlml warns of it at check, where SQLFlow is silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sqlml.models.xgboost.objectives import ranks
from sqlml.runtime.datasource import Columns
from sqlml.runtime.labels import query_ids


def queries(columns: Columns, attributes: Mapping[str, Any], source: str) -> np.ndarray | None:
    """Each row of ``source`` as its query's id for a ranker: by ``train.group_column``, or
    without it all in one query; None for a model that does not rank."""
    if not ranks(attributes):
        return None
    group = attributes.get("train.group_column")
    if group is None:
        return one_query(len(next(iter(columns.values()), ())))
    return query_ids(columns, group, source)


def one_query(rows: int) -> np.ndarray:
    """The query ids of ``rows`` rows that are all one query."""
    return np.zeros(rows, dtype=np.int64)


def one_query_warning(ranker: str) -> str:
    """The warning of a ranker (``XGBRanker``, ``objective rank:ndcg``) trained without a
    query column."""
    return (
        f"{ranker} without train.group_column ranks every row as one query, as SQLFlow "
        "does; add train.group_column = '<column>' to rank the rows of each query"
    )
