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

from sqlml.plugins import KINDS

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
    """Fields every statement has: a stable id, its text and where it starts.

    A subclass that declares its ``kind`` registers itself under it (each kind's folder in
    ``sqlml.statements`` holds its IR classes); :func:`from_dict` rebuilds it by that name, and
    ``ir.<ClassName>`` names it, as compiled programs do.
    """

    kind: ClassVar[str]
    # Fields left out of the JSON when None (added to a kind after programs were compiled).
    omitted_when_none: ClassVar[tuple[str, ...]] = ()
    id: str
    text: str
    line: int
    column: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in vars(cls):
            _CLASSES[cls.kind] = cls

    def to_dict(self) -> dict[str, Any]:
        data = {"kind": self.kind, **dataclasses.asdict(self)}
        for name in self.omitted_when_none:
            if data[name] is None:
                del data[name]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


# The environment variable holding a Katib trial's values, as a JSON object (name -> text).
TRIAL_ENV = "SQLML_TRIAL"


_CLASSES: dict[str, type[Statement]] = {}


def classes() -> dict[str, type[Statement]]:
    """Every statement class that declares a kind, by kind (the declared kinds' loaded)."""
    for kind in KINDS.values():
        kind.ir  # noqa: B018 (imports its class, which registers itself)
    return _CLASSES


def __getattr__(name: str) -> type[Statement]:
    """A statement class by its name: ``ir.TrainStatement``."""
    if name.startswith("__"):  # the import system's questions (``__path__``): no kind loaded
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = next((cls for cls in classes().values() if cls.__name__ == name), None)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


def from_dict(data: dict[str, Any]) -> Statement:
    """Rebuild a statement from :meth:`Statement.to_dict` output."""
    fields = dict(data)
    kind = fields.pop("kind")
    cls = _CLASSES.get(kind) or KINDS[kind].ir
    if "features" in fields:
        fields["features"] = [FeatureColumn.from_dict(item) for item in fields["features"]]
    return cls(**fields)


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
