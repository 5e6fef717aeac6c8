"""``validation.metrics`` checked: every name known (sqlml's, scikit-learn's or Keras's, see
:mod:`sqlml.metrics`) and of the model's task; errors name the metrics as written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.metrics import (
    NEEDS_LABEL,
    OUTLIER_METRICS,
    SUPERVISED,
    UNLABELLED_CLUSTERING_METRICS,
    Metric,
    described,
    find_metric,
    split_names,
    task_metrics,
    unknown_metric_hint,
)
from sqlml.models.registry import families, family

if TYPE_CHECKING:
    from sqlml.statements.evaluate.syntax import EvaluateNode

ATTRIBUTE = "validation.metrics"


def training_task(task: str, attributes: Mapping[str, Any], family_name: str) -> str | None:
    """The task the metrics of a training by the family ``family_name`` measure: a ranker's
    (:meth:`~sqlml.models.Family.ranks`), an ``auto`` task's from its objective; None while
    only the labels can tell."""
    trainer = family(family_name)
    if trainer.ranks(attributes):
        return "ranker"
    if task == "auto":
        return trainer.objective_task(attributes.get("objective"))
    return task


def stored_task(metadata: Mapping[str, Any] | Exception) -> str | None:
    """The task of a stored model from its metadata (None if unreadable): ``clustering`` or
    ``outlier`` for a model that learned without a LABEL (its ``label`` empty), by what it
    predicts (cluster ids, or -1 and 1)."""
    if isinstance(metadata, Exception):
        return None
    trainer = families().get(metadata.get("family", ""))
    if trainer is not None and trainer.ranks(metadata.get("attributes", {})):
        return "ranker"
    labels = metadata.get("labels", {})
    if metadata.get("label") == "":
        return "outlier" if labels.get("classes") == [-1, 1] else "clustering"
    return labels.get("task")


def trained_task(
    task: str, label: str, attributes: Mapping[str, Any], family_name: str
) -> str | None:
    """The task of the model a TO TRAIN of ``task`` writes, as :func:`stored_task` tells it
    once stored: without ``label``, ``clustering`` (``model.n_clusters`` set) or ``outlier``."""
    if not label:
        return "clustering" if attributes.get("model.n_clusters") else "outlier"
    return training_task(task, attributes, family_name)


def evaluated_task(task: str, labelled: bool) -> str:
    """The task TO EVALUATE measures of a model of ``task``, with a LABEL or without: an
    outlier detector evaluated against a LABEL of -1 and 1 is a classifier."""
    return "classifier" if task == "outlier" and labelled else task


def missing_label(task: str, model: str, label: str | None = None) -> tuple[str, str] | None:
    """What is wrong (and what to do) when TO EVALUATE has no LABEL for ``model`` of
    ``task`` (its LABEL column ``label``, if known); None if it needs none."""
    if task not in SUPERVISED:
        return None
    column = label or "<column>"
    return (
        f"TO EVALUATE {model} needs a LABEL: {model} is {described(task)} that learned to predict "
        f"{label or 'a LABEL column'}, and its metrics compare its predictions with that column",
        f"add LABEL {column} before INTO (and select {column}); only clustering and outlier "
        "models are evaluated without a LABEL",
    )


def unlabelled_misfit(names: Sequence[str], model: str) -> tuple[str, str] | None:
    """What is wrong (and what to do) with the first of ``names`` that needs a LABEL, in a
    TO EVALUATE of ``model`` without one; None if none does."""
    for name in names:
        metric = find_metric(name)
        if metric is not None and (metric.task in SUPERVISED or metric.key in NEEDS_LABEL):
            return (
                f"TO EVALUATE {model} has no LABEL, but {ATTRIBUTE} names {name}, which "
                "compares predictions with a LABEL column",
                f"add LABEL <column> before INTO, or remove {name} (without a LABEL, a "
                f"clustering is measured by {', '.join(UNLABELLED_CLUSTERING_METRICS)}, an "
                f"outlier detector by {', '.join(OUTLIER_METRICS)})",
            )
    return None


def check_evaluated(statement: EvaluateNode, task: str | None, label: str | None = None) -> None:
    """TO EVALUATE's LABEL and ``validation.metrics`` (``statement`` parsed) for a model of
    ``task`` (None: not known) whose LABEL column is ``label`` (None: not known); a
    :class:`CheckError` where LABEL is missing (at INTO), or at the attribute."""
    if task is None:
        return
    model = str(statement.model)
    if statement.label is None:
        wrong = missing_label(task, model, label)
        if wrong is not None:
            raise _error(wrong[0], statement.into_pos, wrong[1])
    given = next((a for a in statement.attributes if a.name == ATTRIBUTE), None)
    if given is not None:
        measured = evaluated_task(task, statement.label is not None)
        named = model if measured == task else f"{model}, evaluated against a LABEL,"
        check_metrics(given, measured, named)


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
                f"{ATTRIBUTE}: {name} measures {described(metric.task)}; {model} is "
                f"{described(task)}",
                pos,
                f"remove it; the metrics of {described(task)} are {task_metrics(task)}",
            )
        other = next(((n, m.task) for n, m in found if m.task != metric.task), None)
        if other is not None:
            raise _error(
                f"{ATTRIBUTE}: {name} measures {described(metric.task)} but {other[0]} "
                f"{described(other[1])}",
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
