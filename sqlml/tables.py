"""The tables sqlml keeps in the user's database, and the names of its helper tables.

Statements never write into these: a TO PREDICT, TO EVALUATE, TO EXPLAIN or a search's
trials table naming one is refused, at ``sqlml check`` and when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence

MODEL_VERSIONS = "sqlml_model_versions"  # one row per model version: its metadata
MODEL_CHUNKS = "sqlml_model_chunks"  # the models' bytes
MODEL_ALIASES = "sqlml_model_aliases"  # a model's named versions: champion -> 3
MODEL_RETENTION = "sqlml_model_retention"  # how many versions of a model are kept
RUNS = "sqlml_runs"  # the run record: one row per run
RUN_STEPS = "sqlml_run_steps"  # and one per step of a run
OWN_TABLES = (MODEL_VERSIONS, MODEL_CHUNKS, MODEL_ALIASES, MODEL_RETENTION, RUNS, RUN_STEPS)
HELPER_MARK = "__sqlml_"  # in the names of staging tables: <table>__sqlml_new_<id>


def is_own_table(table: Sequence[str]) -> bool:
    """Whether ``table`` (``name`` or ``schema.name``) is one of sqlml's tables or helper
    tables, in any schema and any letter case (some databases ignore case)."""
    name = table[-1].lower()
    return name in OWN_TABLES or HELPER_MARK in name
