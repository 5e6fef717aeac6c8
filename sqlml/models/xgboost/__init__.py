"""The XGBoost family: gradient-boosted trees and linear models, stored as UBJSON, trained
by several processes with ``train.workers`` (locally, or in an XGBoostJob on Kubernetes).

This module imports no more than the interface: the estimators' declarations (which need the
semantics layer) load on first lookup, XGBoost itself with :mod:`.model`, when an XGBoost
model is trained or used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import CompiledModel, Explainer, Family
from sqlml.models.metadata import MAX_SIZE
from sqlml.models.xgboost import objectives

# XGBoost's OpenMP threads sleep at a barrier instead of spinning (read when XGBoost's libgomp
# loads, after this; a user's own setting wins). External memory runs a parallel loop per page,
# and spinning threads took the cores others needed: 20 rounds on 4,000,000 rows, 262,144-row
# pages, a busy 2-core machine: 23 to 33 s (26 to 35 s CPU) spinning, 10 to 12 s sleeping.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel
    from sqlml.statements.train.syntax import TrainNode
    from sqlml.steps.kubeflow import JobKind, Replica
    from sqlml.workflow.core import Step


class XGBoost(Family):
    name = "xgboost"
    title = "XGBoost"
    format = "xgboost-ubj"
    extensions = (".json", ".ubj")
    trainer_module = "sqlml.models.xgboost.model"
    distributed_module = "sqlml.models.xgboost.distributed"
    explainers = ("TreeExplainer", "XGBoostExplainer", "ShapleyExplainer", "PermutationExplainer")
    # XGBoost's importance of each feature: total gain, and the number of splits (fscore).
    own_explainers = (
        Explainer(
            "XGBoostExplainer",
            "importances",
            "total gain of the feature's splits",
            "total gain of each feature's splits",
        ),
    )
    libraries = ("xgboost",)
    streams = True  # external memory
    import_formats = {"xgboost": (".json", ".ubj")}  # noqa: RUF012 (a declaration, never changed)
    # XGBoost's compat module imports scikit-learn (and through it more of SciPy, and pandas)
    # for XGBoost's scikit-learn API: sqlml uses only the Booster, on arrays. (XGBoost's core
    # imports the part of SciPy it needs itself, and pandas only when given a DataFrame.)
    unused_imports = {"xgboost.compat": ("sklearn",)}  # noqa: RUF012 (a declaration)
    job_head_is_worker = True  # the XGBoostJob's Master is rank 0 of train.workers

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.xgboost.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        model: Any = self.trainer()
        return model.exporter(stored)

    def import_format_of(self, data: bytes) -> str | None:
        """XGBoost's JSON or UBJSON, as XGBoost tells them (:mod:`.checks`)."""
        return (
            "xgboost" if data[:2] == b'{"' or (data[:1] == b"{" and data[1:2].isalpha()) else None
        )

    def to_onnx(self, stored: StoredModel) -> bytes:
        """The booster converted by onnxmltools (the ``import`` extra)."""
        model: Any = self.trainer()
        return model.to_onnx(stored)

    def to_sql(self, stored: StoredModel) -> CompiledModel:
        """Trees as nested CASEs, a linear booster as arithmetic (:mod:`.sql`)."""
        from sqlml.models.xgboost.sql import compile_model

        return compile_model(stored)

    def objective_task(self, objective: object) -> str | None:
        return objectives.task(objective)

    def ranks(self, attributes: Mapping[str, Any]) -> bool:
        return objectives.ranks(attributes)

    def check_training(
        self, statement: TrainNode, estimator: Estimator, attributes: dict[str, Any]
    ) -> None:
        """``eval_metric``, ``train.workers`` and a ranker's query column (:mod:`.analysis`)."""
        from sqlml.models.xgboost.analysis import check_training

        check_training(statement, estimator, attributes)

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

    def job_kind(self, kubeflow: ModuleType) -> JobKind:
        """The training operator's XGBoostJob, ``sqlml.steps.xgboost.train`` in the step zoo."""
        return kubeflow.JobKind(
            "XGBoostJob",
            kubeflow.API_VERSION,
            "xgbReplicaSpecs",
            roles=("Master", "Worker"),
            head="Master",
            container="xgboost",
            spec_order=("runPolicy", "xgbReplicaSpecs"),
            plural="xgboostjobs",
            operator="xgboostjob-controller",
            zoo="xgboost",
        )

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
        train = kubeflow.job_builder(self.job_kind(kubeflow))
        return train(name, master=replica(1), workers=others, **options)


FAMILY = XGBoost()
