"""The intermediate representation: one checked statement as a plain, JSON-serialisable value.

The same IR drives the local executor in-process and a step running in a container
(``python -m sqlml.runtime.step``), so both behave alike.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

# Feature column kinds; "auto" is a plain column name, resolved from the data at train time.
FEATURE_KINDS = (
    "auto",
    "numeric",
    "dense",
    "sparse",
    "category_id",
    "seq_category_id",
    "category_hash",
    "weighted_category",
    "bucket",
    "embedding",
    "indicator",
    "cross",
)

# Kinds named by their column alone.
_PLAIN_KINDS = ("auto", "numeric", "dense", "sparse", "category_id")


@dataclass(frozen=True)
class FeatureColumn:
    """One feature: how a model reads ``column`` (or the feature columns in ``inputs``).

    docs/features.md describes each kind's ``params``; ``dataclasses.asdict`` gives its JSON.
    ``target`` is the model input a feature feeds (``COLUMN ... FOR``), for estimators with
    several: "linear" or "dnn" for the DNNLinearCombined estimators; None feeds them all.
    """

    kind: str  # one of FEATURE_KINDS
    column: str | None = None  # the column this node reads itself, if any
    params: dict[str, Any] = field(default_factory=dict)
    inputs: list[FeatureColumn] = field(default_factory=list)
    target: str | None = None

    @property
    def name(self) -> str:
        """How the feature is named in explanations: ``age``, ``BUCKET(age)``, ``CROSS(a, b)``."""
        if self.kind in _PLAIN_KINDS:
            return self.column or ""
        names = [item.name for item in self.inputs]
        if self.column:
            names.append(self.column)
        return f"{self.kind.upper()}({', '.join(names)})"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureColumn:
        """Rebuild a feature column from ``dataclasses.asdict`` output."""
        return cls(
            data["kind"],
            data.get("column"),
            dict(data.get("params", {})),
            [cls.from_dict(item) for item in data.get("inputs", [])],
            data.get("target"),
        )


@dataclass(frozen=True)
class Statement:
    """Fields every statement has: a stable id, its text and where it starts."""

    kind: ClassVar[str]
    id: str
    text: str
    line: int
    column: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class SqlStatement(Statement):
    """Standard SQL, run by the database as written; ``params`` binds its ``:name``
    placeholders as the driver's parameters."""

    kind: ClassVar[str] = "sql"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainStatement(Statement):
    """Train ``estimator`` on the rows of ``select`` (from ``base_model``) and save it as ``model``.

    ``attributes`` may hold ``validation.select``: a SELECT whose rows validate the model.
    """

    kind: ClassVar[str] = "train"
    select: str
    estimator: str
    family: str  # the name of its model family (sqlml.models), which trains it
    task: str  # "classifier", "regressor", or "auto": decided by objective and label
    attributes: dict[str, Any]  # checked, with defaults and the estimator's fixed parameters
    features: list[FeatureColumn]  # empty: derived from every selected column but the label
    label: str
    model: str
    base_model: str | None = None  # USING: the stored model whose training continues


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


# The environment variable holding a Katib trial's values, as a JSON object (name -> text).
TRIAL_ENV = "SQLML_TRIAL"


@dataclass(frozen=True)
class PredictStatement(Statement):
    """Predict the rows of ``select`` with ``model`` into ``table``.``column``."""

    kind: ClassVar[str] = "predict"
    select: str
    table: list[str]
    result_column: str
    model: str
    attributes: dict[str, Any]


@dataclass(frozen=True)
class EvaluateStatement(Statement):
    """Score ``model`` on the rows of ``select`` against ``label``; metrics into ``table``."""

    kind: ClassVar[str] = "evaluate"
    select: str
    model: str
    label: str
    table: list[str]
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ExplainStatement(Statement):
    """Per-feature attributions of ``model`` on the rows of ``select``."""

    kind: ClassVar[str] = "explain"
    select: str
    model: str
    explainer: str | None
    table: list[str] | None  # None: show the summary instead of writing a table
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ShowTrainStatement(Statement):
    """The TO TRAIN statement that trained ``model``."""

    kind: ClassVar[str] = "show_train"
    model: str


@dataclass(frozen=True)
class ShowModelsStatement(Statement):
    """The stored models."""

    kind: ClassVar[str] = "show_models"


@dataclass(frozen=True)
class DescribeModelStatement(Statement):
    """A stored model's estimator, features, label and metrics."""

    kind: ClassVar[str] = "describe_model"
    model: str


@dataclass(frozen=True)
class DropModelStatement(Statement):
    """Delete a stored model."""

    kind: ClassVar[str] = "drop_model"
    model: str
    if_exists: bool


@dataclass(frozen=True)
class AssertStatement(Statement):
    """Fail unless ``condition`` (SQL) holds; ``select`` evaluates it: 1 true, 0 false, NULL.

    ``observed`` pairs a label with the SQL of each scalar subquery of the condition, whose
    values a failure reports.
    """

    kind: ClassVar[str] = "assert"
    condition: str
    message: str | None
    select: str
    observed: list[list[str]]


def from_dict(data: dict[str, Any]) -> Statement:
    """Rebuild a statement from :meth:`Statement.to_dict` output."""
    fields = dict(data)
    cls = _classes()[fields.pop("kind")]
    if "features" in fields:
        fields["features"] = [FeatureColumn.from_dict(item) for item in fields["features"]]
    return cls(**fields)


def _classes() -> dict[str, type[Statement]]:
    """Every statement class that declares a kind, by kind."""
    found: dict[str, type[Statement]] = {}
    todo = [Statement]
    while todo:
        for cls in todo.pop().__subclasses__():
            if "kind" in vars(cls):
                found[cls.kind] = cls
            todo.append(cls)
    return found


def to_argument(data: dict[str, Any]) -> str:
    """A statement's :meth:`Statement.to_dict` as one command-line word that no shell (Katib
    runs trial commands through ``sh -c``) and no kubelet (``$(VAR)``, ``$$``) can alter:
    its JSON in base64."""
    return base64.b64encode(json.dumps(data, separators=(",", ":")).encode()).decode()


def from_argument(text: str) -> Statement:
    """The statement of a step's argument: JSON, or JSON in base64 (:func:`to_argument`).
    A ValueError says what is wrong with it."""
    if not text.lstrip().startswith("{"):
        try:
            text = base64.b64decode(text, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as error:
            raise ValueError(f"the statement is neither JSON nor base64: {error}") from None
    return from_dict(json.loads(text))
