"""Model families: each a :class:`Family` that declares its estimators and knows how to
train, score, explain, export and distribute its models.

The built-in families are the packages listed in :data:`BUILT_IN`; others join with
:func:`register`. The estimator table (:mod:`sqlml.semantics.estimators`) is assembled from
the registered families. A family's declarations are cheap to import; its library (XGBoost,
TensorFlow) is imported only when one of its models is trained or used.
"""

from sqlml.models.interface import Family, Trainer, TreeTrainer
from sqlml.models.registry import BUILT_IN, families, family, register, unregister

__all__ = [
    "BUILT_IN",
    "Family",
    "Trainer",
    "TreeTrainer",
    "families",
    "family",
    "register",
    "unregister",
]
