"""The step zoo: functions that make workflow steps.

Each sqlml statement becomes one step whose parameters are the statement's IR, so the same
IR runs in-process (local backend) or in a container (``python -m sqlml.runtime.step``).
"""

from types import SimpleNamespace

from sqlml.statements import KINDS
from sqlml.steps import katib, kubeflow
from sqlml.steps.search import hyperparameter_search, katib_search
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

# Distributed jobs, named as in the step zoo: tensorflow.train, pytorch.train, xgboost.train,
# mpi.train (Kubeflow training jobs) and katib.run (a Katib Experiment).
tensorflow = SimpleNamespace(train=kubeflow.tensorflow_train)
pytorch = SimpleNamespace(train=kubeflow.pytorch_train)
xgboost = SimpleNamespace(train=kubeflow.xgboost_train)
mpi = SimpleNamespace(train=kubeflow.mpi_train)

# The step function for each IR statement kind, as the kind declares it (a search's takes
# the workflow: it adds the trials and a fan-in step).
STEP_FOR_KIND = {name: kind.step for name, kind in KINDS.items() if kind.step is not None}

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
    "xgboost",
]
