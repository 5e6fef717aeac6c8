"""A model family installed with pip: ConstantRegressor predicts the mean label (shrunk
toward 0 by ``model.shrink``), stored as JSON (no pickle). It declares its own metrics (the
training rows and the mean, in the model's metadata), its own explainer (ConstantExplainer:
no feature moves a constant) and its own Kubeflow job kind (a ConstantJob of a Master and
Workers), as a plugin family declares what sqlml asks of it.

This module imports sqlml's interface only; NumPy comes with :mod:`.model`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlml.models.attributes import schema
from sqlml.models.estimator import Estimator
from sqlml.models.interface import Explainer, Family
from sqlml.semantics.attributes import Attr


class Constant(Family):
    name = "constant"
    title = "Constant"
    format = "constant-json"
    extensions = (".json",)
    trainer_module = "sqlml_constant_family.model"
    explainers = ("ConstantExplainer", "PermutationExplainer")
    own_explainers = (
        Explainer(
            "ConstantExplainer",
            "importances",
            "change of the prediction with the feature",
            "how much each feature moves the constant",
        ),
    )
    job_head_is_worker = True  # the ConstantJob's Master trains too

    def estimators(self) -> Iterable[Estimator]:
        shrink = Attr("model.shrink", "float", 0.0, "shrink toward 0", minimum=0, maximum=1)
        doc = "predicts the mean label"
        return (Estimator("ConstantRegressor", self.name, "regressor", schema(shrink), doc),)

    def exporter(self, stored: Any) -> Callable[[Path], Any]:
        return lambda path: path.write_bytes(stored.data)

    def check_data(self, data: bytes, metadata: dict[str, Any], most_features: int) -> str | None:
        try:
            document = json.loads(data)
        except ValueError:
            return "it is not JSON"
        mean = document.get("mean") if isinstance(document, dict) else None
        if not isinstance(mean, float | int) or not math.isfinite(mean):
            return "its mean is not a finite number"
        return None

    def job_kind(self, kubeflow: ModuleType) -> Any:
        return kubeflow.JobKind(
            "ConstantJob",
            "constant.example.org/v1",
            "constantReplicaSpecs",
            roles=("Master", "Worker"),
            head="Master",
            container="constant",
            spec_order=("runPolicy", "constantReplicaSpecs"),
            plural="constantjobs",
            operator="constantjob-controller",
            zoo="constant",
        )

    def training_job(
        self,
        kubeflow: ModuleType,
        name: str,
        replica: Callable[[int], Any],
        workers: int,
        ps: int | None,
        **options: Any,
    ) -> Any:
        """A ConstantJob: the Master and ``workers - 1`` Workers."""
        train = kubeflow.job_builder(self.job_kind(kubeflow))
        others = replica(workers - 1) if workers > 1 else None
        return train(name, master=replica(1), workers=others, **options)


FAMILY = Constant()
