"""The step zoo: functions that make workflow steps.

Each sqlml statement becomes one step whose parameters are the statement's IR, so the same
IR runs in-process (local backend) or in a container (``python -m sqlml.runtime.step``).
"""

from sqlml.steps.statements import evaluate, explain, model_admin, predict, sql, train

# The step function for each IR statement kind.
STEP_FOR_KIND = {
    "sql": "sql",
    "train": "train",
    "predict": "predict",
    "evaluate": "evaluate",
    "explain": "explain",
    "show_train": "model_admin",
    "show_models": "model_admin",
    "describe_model": "model_admin",
    "drop_model": "model_admin",
}

__all__ = ["STEP_FOR_KIND", "evaluate", "explain", "model_admin", "predict", "sql", "train"]
