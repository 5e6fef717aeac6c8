"""What running a statement produced: the value every statement handler returns."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlml.datasources import ResultSet

# The outputs of a step that name the model version its statement trained or measured
MODEL_OUTPUTS = ("model", "version")


@dataclass(frozen=True)
class Outcome:
    """What a statement produced: rows to show and/or a one-line summary; the version of a
    model it trained or measured (``model``: name and version) and, TO EVALUATE's, the
    ``metrics`` it measured of it. A recorded run keeps the last two as the step's outputs
    (:meth:`outputs`), which the model's page reads."""

    result: ResultSet | None = None
    summary: str | None = None
    model: tuple[str, int] | None = None
    metrics: dict[str, float] | None = None

    def outputs(self) -> dict[str, str]:
        """The step's outputs besides its result: ``model``, ``version`` and ``metrics``
        (JSON), those it has."""
        found = {}
        if self.model is not None:
            found = dict(zip(MODEL_OUTPUTS, (self.model[0], str(self.model[1])), strict=True))
        if self.metrics is not None:
            found["metrics"] = json.dumps(self.metrics)
        return found


def model_of(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """The model version a step's recorded ``outputs`` name (``{"name", "version"}``), or
    None."""
    name, version = (outputs.get(key) for key in MODEL_OUTPUTS)
    if not isinstance(name, str) or not isinstance(version, str) or not version.isdigit():
        return None
    return {"name": name, "version": int(version)}
