"""``validation.metrics`` checked: every name known (sqlml's, scikit-learn's or Keras's, see
:mod:`sqlml.metrics`) and of the model's task; errors name the metrics as written."""

from __future__ import annotations

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.metrics import Metric, find_metric, split_names, task_metrics, unknown_metric_hint

ATTRIBUTE = "validation.metrics"


def check_metrics(attribute: ast.Attribute, task: str | None, model: str) -> str:
    """The names of ``attribute`` as reported, comma-separated, each once; a
    :class:`CheckError` (at the attribute) for a name that is unknown, of another task than
    ``task`` (None: not known yet) or of another task than the names before it. ``model``
    says whose task it is, in errors."""
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
    reported: dict[str, str] = {}
    for _, metric in found:
        reported.setdefault(metric.name.lower(), metric.name)
    return ",".join(reported.values())


def _error(message: str, pos: ast.Position, hint: str) -> CheckError:
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)
