"""The IR of TO TRAIN, of the hyperparameter search it may become, and of its trials."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlml.ir import FeatureColumn, Statement


@dataclass(frozen=True)
class TrainStatement(Statement):
    """Train ``estimator`` on the rows of ``select`` (from ``base_model``) and save it as ``model``.

    ``attributes`` may hold ``validation.select``: a SELECT whose rows validate the model.
    """

    kind: ClassVar[str] = "train"
    # Left out of the JSON when None, so a statement without them reads as before: the model
    # zoo images, the base model's version and attributes repeated, the training attributes.
    omitted_when_none: ClassVar[tuple[str, ...]] = (
        "image",
        "base_image",
        "base_version",
        "repeated",
        "training_attributes",
    )
    select: str
    estimator: str
    family: str  # the name of its model family (sqlml.models), which trains it
    task: str  # "classifier", "regressor", or "auto": decided by objective and label
    attributes: dict[str, Any]  # checked, with defaults and the estimator's fixed parameters
    features: list[FeatureColumn]  # empty: derived from every selected column but the label
    label: str
    model: str
    base_model: str | None = None  # USING: the stored model whose training continues
    base_version: int | str | None = None  # USING ... VERSION: a number or an alias
    # A model zoo's image: of the estimator (TO TRAIN <image>/<estimator>) and of the model
    # USING names (USING registry:5000/model:v1). The step's image on Argo; ignored locally.
    # Left out of the JSON when None, so a statement without one reads as before.
    image: str | None = None
    base_image: str | None = None
    # USING: the base model's architecture attributes the statement repeats, under their
    # stored names: {"written": name, "value": v, "line": l, "column": c}. Each must equal
    # the base's, checked when it is loaded.
    repeated: dict[str, dict[str, Any]] | None = None
    # USING: the stored names of the estimator's attributes that are not its architecture
    # (the analysis resolved it): the base model's values of these are not kept, its others
    # are.
    training_attributes: list[str] | None = None


@dataclass(frozen=True)
class SearchStatement(TrainStatement):
    """A TO TRAIN with candidate values: trials of the training, the best saved as ``model``.

    ``space``: searched attribute -> ``{"kind": "choice", "values": [...]}`` or
    ``{"kind": "uniform" | "log_uniform" | "int_range", "low": x, "high": y}`` (and its
    schema ``type``); ``search``: ``trials``, ``algorithm``, ``seed``, ``metric`` (None: from
    the task), ``goal``, ``parallel`` and ``trials_table`` (its name's parts).
    """

    kind: ClassVar[str] = "search"
    space: dict[str, dict[str, Any]] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TrialStatement(SearchStatement):
    """One trial of a search: ``trial`` holds its key (``"trial"``) and each searched
    attribute's value as text (as Katib passes them, in :data:`TRIAL_ENV`)."""

    kind: ClassVar[str] = "trial"
    trial: dict[str, str] = field(default_factory=dict)
