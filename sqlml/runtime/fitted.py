"""What fitting a model gives, and what the in-memory and the external-memory paths of
TO TRAIN share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.model_store import StoredModel


@dataclass(frozen=True)
class Fitted:
    """A trained model and what its metadata records: the training rows' count, features and
    labels, and the validation rows' labels and scores (how they were chosen in ``how``)."""

    data: bytes
    details: dict[str, Any]
    features: list[ir.FeatureColumn]
    labels: LabelEncoding
    rows: int
    how: dict[str, Any] | None = None
    validation_y: np.ndarray | None = None
    validation_scores: np.ndarray | None = None
    validation_groups: np.ndarray | None = None


def base_features(base: StoredModel) -> list[ir.FeatureColumn]:
    """The feature columns a stored model was trained with."""
    return [ir.FeatureColumn.from_dict(f) for f in base.metadata["features"]]


@contextmanager
def blame(source: str | None) -> Iterator[None]:
    """Errors in the body name ``source`` (when given) as their cause."""
    try:
        yield
    except SqlmlError as error:
        if source is None:
            raise
        raise type(error)(f"{source}: {error.message}", hint=error.hint) from None
