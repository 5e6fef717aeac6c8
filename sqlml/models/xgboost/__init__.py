"""The XGBoost family: gradient-boosted trees and linear models, stored as UBJSON, trained
by several processes with ``train.workers`` (locally, or in an XGBoostJob on Kubernetes).

This module imports no more than the interface: the estimators' declarations (which need the
semantics layer) load on first lookup, XGBoost itself with :mod:`.model`, when an XGBoost
model is trained or used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family
from sqlml.models.metadata import MAX_SIZE

# XGBoost's OpenMP threads sleep at a barrier instead of spinning (read when XGBoost's libgomp
# loads, after this; a user's own setting wins). External memory runs a parallel loop per page,
# and spinning threads took the cores others needed: 20 rounds on 4,000,000 rows, 262,144-row
# pages, a busy 2-core machine: 23 to 33 s (26 to 35 s CPU) spinning, 10 to 12 s sleeping.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel
    from sqlml.steps.kubeflow import Replica
    from sqlml.workflow.core import Step


class XGBoost(Family):
    name = "xgboost"
    format = "xgboost-ubj"
    extensions = (".json", ".ubj")
    trainer_module = "sqlml.models.xgboost.model"
    distributed_module = "sqlml.models.xgboost.distributed"
    explainers = ("TreeExplainer", "XGBoostExplainer", "ShapleyExplainer", "PermutationExplainer")
    streams = True  # external memory
    job_head_is_worker = True  # the XGBoostJob's Master is rank 0 of train.workers

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.xgboost.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        model: Any = self.trainer()
        return model.exporter(stored)

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether the objective and the number of classes fit the labels."""
        params, labels = metadata["params"], metadata["labels"]
        task, classes = labels["task"], labels["classes"]
        objective = params.get("objective")
        if not isinstance(objective, str):
            return "its XGBoost objective is missing"
        classifying = objective.startswith(("binary:", "multi:"))
        num_class = params.get("num_class")
        if (
            classifying is not (task == "classifier")
            or (objective.startswith("binary:") and len(classes) != 2)
            or (
                objective.startswith("multi:")
                and not (isinstance(num_class, int) and len(classes) <= num_class <= MAX_SIZE)
            )
        ):
            return f"its XGBoost objective {objective} does not fit its labels"
        return None

    def check_data(self, data: bytes, metadata: dict[str, Any], most_features: int) -> str | None:
        """Whether XGBoost can read and use the model safely (:mod:`.structure`)."""
        from sqlml.models.xgboost.checks import xgboost_document
        from sqlml.models.xgboost.structure import Damaged, check_model

        try:
            check_model(xgboost_document(data, Damaged), metadata["params"], most_features)
        except Damaged as damage:
            return str(damage)
        return None

    def training_job(
        self,
        kubeflow: ModuleType,
        name: str,
        replica: Callable[[int], Replica],
        workers: int,
        ps: int | None,
        **options: Any,
    ) -> Step:
        """An XGBoostJob of ``workers`` pods in all: the Master (rank 0, the collective's
        tracker) and ``workers - 1`` Workers, each training on its part of the rows
        (:mod:`sqlml.models.xgboost.distributed`)."""
        others = replica(workers - 1) if workers > 1 else None
        return kubeflow.xgboost_train(name, master=replica(1), workers=others, **options)


FAMILY = XGBoost()
