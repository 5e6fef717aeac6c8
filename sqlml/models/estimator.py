"""An estimator: a trainable model kind a family declares (``TO TRAIN <estimator>``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlml import errors
from sqlml.ir import FEATURE_KINDS

if TYPE_CHECKING:
    from sqlml.semantics.attributes import Attr

# The feature kinds of a model that reads one numeric matrix (categories one-hot: k-means,
# scikit-learn's models...): no embeddings, crosses or sequences.
MATRIX_FEATURE_KINDS = (
    "auto",
    "numeric",
    "dense",
    "sparse",
    "category_id",
    "category_hash",
    "bucket",
    "indicator",
)


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
    # Another library's attribute names: the family's name each stands for (None: accepted,
    # ignored, with a warning).
    renamed: dict[str, str | None] = field(default_factory=dict)
    labelled: bool = True  # False: it learns without a LABEL (clustering, outliers)
    # What sqlml trains instead, for a name that stands for a model it does not train
    # exactly (another library's, SQLFlow's model zoo's); warned of at check and run time.
    instead: str | None = None
    # Attributes naming columns it reads besides COLUMN's (a graph's node id and edge ends):
    # a COLUMN clause that leaves them out still feeds them.
    reads: tuple[str, ...] = ()

    def task_for(self, attributes: dict[str, Any]) -> str:
        """The task of a training with the checked WITH ``attributes``."""
        if self.task == "auto" and self.classes_attribute in attributes:
            return "classifier"
        return self.task

    def translated(self, attributes: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The checked ``attributes`` under the family's names (:attr:`renamed`), and those
        given that it ignores."""
        kept = {k: v for k, v in attributes.items() if k not in self.renamed}
        kept.update({to: attributes[k] for k, to in self.renamed.items() if to and k in attributes})
        return kept, [k for k, to in self.renamed.items() if to is None and k in attributes]


def warn(line: int, column: int, text: str, hint: str | None = None) -> None:
    """A one-line warning on standard error about the statement at ``line``, ``column``
    (``file:line:column: warning: text``), and the ``hint`` saying what to do on a line of
    its own."""
    errors.warn(text, line, column, hint)
