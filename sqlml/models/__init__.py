"""Model families: each a :class:`Family` that declares its estimators and knows how to
train, score, explain, export and distribute its models.

The built-in families are the packages here; installed ones join through the entry points
of ``sqlml.families`` (:mod:`sqlml.plugins`), others with :func:`register`. The estimator
table (:mod:`sqlml.semantics.estimators`) is assembled from the registered families. A
family's declarations are cheap to import; its library (XGBoost, TensorFlow) is imported
only when one of its models is trained or used.

A new family is one package, ``sqlml/models/<name>/``, as ``xgboost`` and ``keras`` are:

- ``__init__.py``: a :class:`Family` subclass (name and title, stored format, export
  extensions, explainers and its own (:class:`~sqlml.models.interface.Explainer`), its
  objectives' tasks and whether it ranks, its TO TRAIN checks, its library's modules, its
  Kubeflow job's kind and builder, whether it scores a SELECT's rows together, TO PREDICT's
  extra outputs its models offer) and
  ``FAMILY``, its instance (found by its folder). The rest of sqlml asks these declarations
  and never names a family (``tests/test_family_boundaries.py``);
- ``estimators.py``: its :class:`~sqlml.models.estimator.Estimator` declarations, their
  attributes built with :func:`sqlml.models.attributes.schema`, loaded on first lookup;
- ``model.py`` (its ``trainer_module``): train and scorer (:class:`Trainer`), and
  train_batches if the family ``streams`` (:class:`StreamingTrainer`), import_model if it
  declares ``import_formats``, files TO IMPORT reads as its models (:class:`ImportingTrainer`),
  extra_scorer if it has extra outputs of its own (:class:`ExtraScoringTrainer`), to_onnx
  if it converts to ONNX; the only module that imports the library;
- ``checks.py``: checks on stored bytes before the library reads them.
- ``sql.py``, if its models compile into portable SQL (``sqlml export --format sql``): what
  its :meth:`Family.to_sql` returns, a :class:`CompiledModel` of sqlglot expressions built
  with :mod:`sqlml.models.compiled` (XGBoost's and the clustering family's do; others refuse).

The model store (:mod:`sqlml.models.store`) keeps every family's models in the datasource;
:mod:`sqlml.models.applied` loads one and applies it to a SELECT's rows, ready to score (what
TO PREDICT, TO EVALUATE and TO EXPLAIN's handlers share).

Outside sqlml, a package's entry point of ``sqlml.families`` adds one
(``tests/plugins/sqlml_constant_family``, ``tests/test_family_entry_point.py``), and
``register(MyFamily())`` in the process (``tests/test_family_plugin.py``).
"""

from sqlml.models.interface import (
    PROBABILITIES,
    CompiledModel,
    ExtraScoringTrainer,
    Family,
    Imported,
    ImportingTrainer,
    StreamingTrainer,
    Trainer,
    TreeTrainer,
)
from sqlml.models.registry import families, family, register, unregister

__all__ = [
    "PROBABILITIES",
    "CompiledModel",
    "ExtraScoringTrainer",
    "Family",
    "Imported",
    "ImportingTrainer",
    "StreamingTrainer",
    "Trainer",
    "TreeTrainer",
    "families",
    "family",
    "register",
    "unregister",
]
