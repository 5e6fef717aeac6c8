"""A model family, registered by tests only, whose distributed TO TRAIN is a TFJob (a chief,
workers, parameter servers): what a plug-in family that distributes TensorFlow training
would return. sqlml's own Keras family trains in one process; the Argo tests of TFJobs
(their manifests, conditions, logs and stop) compile this family's statements."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlml.models.attributes import schema
from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family
from sqlml.steps.kubeflow import Replica
from sqlml.workflow.core import Step


class TFJobFamily(Family):
    name = "tfjob"
    format = "tfjob-none"
    extensions = (".none",)
    trainer_module = "tfjob_family"  # never imported: these tests compile, never train
    parameter_servers = True

    def estimators(self) -> tuple[Estimator, ...]:
        doc = "compiled to a TFJob; never trained"
        return (
            Estimator(
                "TFJobRegressor", self.name, "regressor", schema(parameter_servers=True), doc
            ),
        )

    def exporter(self, stored: Any) -> Callable[[Path], Any]:
        raise NotImplementedError

    def training_job(
        self,
        kubeflow: ModuleType,
        name: str,
        replica: Callable[[int], Replica],
        workers: int,
        ps: int | None,
        **options: Any,
    ) -> Step:
        """A TFJob: a chief pod, the workers and the parameter servers."""
        return kubeflow.tensorflow_train(
            name,
            chief=replica(1),
            workers=replica(workers),
            ps=replica(ps) if ps else None,
            **options,
        )
