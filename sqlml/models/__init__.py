"""Model families: each a :class:`Family` that declares its estimators and knows how to
train, score, explain, export and distribute its models.

The built-in families are the packages here; installed ones join through the entry points
of ``sqlml.families`` (:mod:`sqlml.plugins`), others with :func:`register`. The estimator
table (:mod:`sqlml.semantics.estimators`) is assembled from the registered families. A
family's declarations are cheap to import; its library (XGBoost, TensorFlow) is imported
only when one of its models is trained or used.

A new family is one package, ``sqlml/models/<name>/``, as ``xgboost`` and ``keras`` are:

- ``__init__.py``: a :class:`Family` subclass (name, stored format, export extensions,
  explainers, Kubeflow job) and ``FAMILY``, its instance (found by its folder);
- ``estimators.py``: its :class:`~sqlml.models.estimator.Estimator` declarations, their
  attributes built with :func:`sqlml.models.attributes.schema`, loaded on first lookup;
- ``model.py`` (its ``trainer_module``): train and scorer (:class:`Trainer`), and
  train_batches if the family ``streams`` (:class:`StreamingTrainer`), the only module that
  imports the library;
- ``checks.py``: checks on stored bytes before the library reads them.

The model store (:mod:`sqlml.models.store`) keeps every family's models in the datasource.

Outside sqlml, ``register(MyFamily())`` adds one (``tests/test_family_plugin.py``).
"""

from sqlml.models.interface import Family, StreamingTrainer, Trainer, TreeTrainer
from sqlml.models.registry import families, family, register, unregister

__all__ = [
    "Family",
    "StreamingTrainer",
    "Trainer",
    "TreeTrainer",
    "families",
    "family",
    "register",
    "unregister",
]
