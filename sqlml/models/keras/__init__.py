"""The Keras family: neural networks and linear models, stored as ``.keras`` archives and
loaded in safe mode, trained in one process (a step's pod on Kubernetes: sqlml does not
distribute Keras training, whose TFJob replicas would each train on every row).

This module imports no more than the interface: the estimators' declarations (which need the
semantics layer) load on first lookup, TensorFlow with :mod:`.model`, when a Keras model is
trained or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import CompiledModel, Family
from sqlml.models.keras.checks import keras_archive

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel
    from sqlml.semantics.attributes import Attr


class Keras(Family):
    name = "keras"
    title = "Keras"
    builders = "a function (features, n_outputs, attributes) that builds Keras layers"
    format = "keras-v3"
    trainer_module = "sqlml.models.keras.model"
    extensions = (".keras",)
    explainers = ("ShapleyExplainer", "PermutationExplainer")
    parameter_servers = True
    streams = True  # tf.data
    libraries = ("tensorflow", "keras", "sqlflow_models")  # SQLFlow's model zoo too

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.keras.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The archive of the checked members (no TensorFlow needed)."""
        archive = keras_archive(stored.data)
        return lambda path: path.write_bytes(archive)

    def to_sql(self, stored: StoredModel) -> CompiledModel:
        """A chain of dense layers over plain numeric features, as sums of products
        (:mod:`.sql`); TensorFlow loads the network once its features are known to compile."""
        from sqlml.models.keras.sql import compile_model

        trainer: Any = self.trainer()
        return compile_model(stored, trainer.loaded)

    def builder(self, name: str) -> Estimator | None:
        from sqlml.models.keras.estimators import builder_estimator

        return builder_estimator(name)

    def builder_attributes(self) -> Mapping[str, Attr]:
        from sqlml.models.keras.estimators import USER_MODEL_ATTRIBUTES

        return USER_MODEL_ATTRIBUTES


FAMILY = Keras()
