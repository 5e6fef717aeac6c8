"""The step zoo: functions that make workflow steps.

Each sqlml statement becomes one step whose parameters are the statement's IR, so the same
IR runs in-process (local backend) or in a container (``python -m sqlml.runtime.step``).
"""

from types import SimpleNamespace

from sqlml.steps import katib, kubeflow
from sqlml.steps.search import hyperparameter_search, katib_search
from sqlml.steps.statements import assertion, evaluate, explain, model_admin, predict, sql, train

# Distributed jobs, named as in the step zoo: tensorflow.train, pytorch.train, xgboost.train,
# mpi.train (Kubeflow training jobs) and katib.run (a Katib Experiment).
tensorflow = SimpleNamespace(train=kubeflow.tensorflow_train)
pytorch = SimpleNamespace(train=kubeflow.pytorch_train)
xgboost = SimpleNamespace(train=kubeflow.xgboost_train)
mpi = SimpleNamespace(train=kubeflow.mpi_train)

# The step function for each IR statement kind.
STEP_FOR_KIND = {
    "sql": "sql",
    "train": "train",
    "predict": "predict",
    "evaluate": "evaluate",
    "explain": "explain",
    "assert": "assertion",
    "show_train": "model_admin",
    "show_models": "model_admin",
    "describe_model": "model_admin",
    "drop_model": "model_admin",
    "search": "hyperparameter_search",  # takes the workflow: it adds the trials and a fan-in
}

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
    "tensorflow",
    "train",
    "xgboost",
]
