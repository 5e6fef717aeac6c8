"""An estimator: a trainable model kind a family declares (``TO TRAIN <estimator>``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlml.ir import FEATURE_KINDS

if TYPE_CHECKING:
    from sqlml.semantics.attributes import Attr


@dataclass(frozen=True)
class Estimator:
    """A trainable model kind: its family (runtime trainer), task, attributes and features."""

    name: str
    family: str  # the name of its Family
    task: str  # "classifier", "regressor", or "auto" (from the objective / label)
    attributes: dict[str, Attr]
    doc: str
    fixed: dict[str, Any] = field(default_factory=dict)  # parameters the name implies
    feature_kinds: tuple[str, ...] = FEATURE_KINDS  # the feature column kinds it takes
    inputs: dict[str, str] = field(default_factory=dict)  # COLUMN ... FOR name -> input
    open_prefix: str | None = None  # attributes with this prefix are taken unchecked
    classes_attribute: str | None = None  # given, it makes an "auto" task a classifier

    def task_for(self, attributes: dict[str, Any]) -> str:
        """The task of a training with the checked WITH ``attributes``."""
        if self.task == "auto" and self.classes_attribute in attributes:
            return "classifier"
        return self.task
