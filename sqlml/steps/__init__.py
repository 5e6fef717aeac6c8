"""The step zoo: functions that make workflow steps.

Each sqlml statement becomes one step whose parameters are the statement's IR, so the same
IR runs in-process (local backend) or in a container (``python -m sqlml.runtime.step``).
"""

from importlib import import_module
from types import SimpleNamespace
from typing import Any

from sqlml.statements import KINDS
from sqlml.steps.statements import (
    assertion,
    evaluate,
    explain,
    model_admin,
    predict,
    sql,
    statement,
    train,
)

# The step function for each IR statement kind, as the kind declares it (a search's takes
# the workflow: it adds the trials and a fan-in step).
STEP_FOR_KIND = {name: kind.step for name, kind in KINDS.items() if kind.step is not None}

# Distributed jobs, named as in the step zoo: tensorflow.train, pytorch.train, mpi.train
# (Kubeflow training jobs), the model families' kinds by their zoo names (XGBoost's
# xgboost.train) and katib.run (a Katib Experiment); and the searches. Their modules load
# when a program first uses them (a run of plain SQL needs none).
_JOBS = {"tensorflow": "tensorflow_train", "pytorch": "pytorch_train", "mpi": "mpi_train"}
_SEARCHES = ("hyperparameter_search", "katib_search")


def __getattr__(name: str) -> Any:
    if name in ("katib", "kubeflow"):
        return import_module(f"{__name__}.{name}")
    if name in _JOBS:
        return SimpleNamespace(train=getattr(import_module(f"{__name__}.kubeflow"), _JOBS[name]))
    if name in _SEARCHES:
        return getattr(import_module(f"{__name__}.search_steps"), name)
    if not name.startswith("_"):  # a family's job, by the zoo name its kind declares
        from sqlml.models.registry import families

        kubeflow = import_module(f"{__name__}.kubeflow")
        for known in families().values():
            kind = known.job_kind(kubeflow)
            if kind is not None and kind.zoo == name:
                return SimpleNamespace(train=kubeflow.job_builder(kind))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STEP_FOR_KIND",
    "assertion",
    "evaluate",
    "explain",
    "hyperparameter_search",
    "katib",
    "katib_search",
    "kubeflow",
    "model_admin",
    "mpi",
    "predict",
    "pytorch",
    "sql",
    "statement",
    "tensorflow",
    "train",
]
