"""``validation.metrics`` checked: every name known (sqlml's, scikit-learn's or Keras's, see
:mod:`sqlml.metrics`) and of the model's task; errors name the metrics as written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.metrics import Metric, find_metric, split_names, task_metrics, unknown_metric_hint
from sqlml.models.xgboost.objectives import ranks

ATTRIBUTE = "validation.metrics"
# The task an XGBoost objective's prefix learns.
_OBJECTIVE_TASKS = {
    "binary": "classifier",
    "multi": "classifier",
    "reg": "regressor",
    "count": "regressor",
}


def training_task(task: str, attributes: Mapping[str, Any]) -> str | None:
    """The task a training's metrics measure: a ranker's (a rank:* objective), an
    ``auto`` task's from its objective; None while only the labels can tell."""
    if ranks(attributes):
        return "ranker"
    if task == "auto":
        objective = str(attributes.get("objective", ""))
        return _OBJECTIVE_TASKS.get(objective.partition(":")[0])
    return task


def stored_task(metadata: Mapping[str, Any] | Exception) -> str | None:
    """The task of a stored model from its metadata (None if unreadable)."""
    if isinstance(metadata, Exception):
        return None
    if ranks(metadata.get("attributes", {})):
        return "ranker"
    return metadata.get("labels", {}).get("task")


def check_evaluated(attributes: Sequence[ast.Attribute], task: str | None, model: str) -> None:
    """TO EVALUATE's ``validation.metrics`` (its WITH ``attributes``) of ``model``'s task."""
    given = next((a for a in attributes if a.name == ATTRIBUTE), None)
    if given is not None and task is not None:
        check_metrics(given, task, model)


def check_metrics(attribute: ast.Attribute, task: str | None, model: str) -> str:
    """The names of ``attribute`` as written, comma-separated, each once (of names reported
    under one column, such as ``accuracy`` and ``Accuracy``, the first); a :class:`CheckError`
    (at the attribute) for a name that is unknown, of another task than ``task`` (None: not
    known yet) or of another task than the names before it. ``model`` says whose task it is,
    in errors."""
    pos = attribute.pos
    found: list[tuple[str, Metric]] = []
    for name in split_names(str(attribute.value)):
        metric = find_metric(name)
        if metric is None:
            raise _error(f"unknown metric {name} in {ATTRIBUTE}", pos, unknown_metric_hint(name))
        if task is not None and metric.task != task:
            raise _error(
                f"{ATTRIBUTE}: {name} measures a {metric.task}; {model} is a {task}",
                pos,
                f"remove it; the metrics of a {task} are {task_metrics(task)}",
            )
        other = next(((n, m.task) for n, m in found if m.task != metric.task), None)
        if other is not None:
            raise _error(
                f"{ATTRIBUTE}: {name} measures a {metric.task} but {other[0]} a {other[1]}",
                pos,
                "keep the metrics of your model's task",
            )
        found.append((name, metric))
    if not found:
        raise _error(f"{ATTRIBUTE} names no metric", pos, "name one, e.g. 'accuracy'")
    written: dict[str, str] = {}
    for name, metric in found:
        written.setdefault(metric.name.lower(), name)
    return ",".join(written.values())


def _error(message: str, pos: ast.Position, hint: str) -> CheckError:
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)
