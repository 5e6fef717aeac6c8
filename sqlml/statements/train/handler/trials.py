"""Hyperparameter search: run one trial, then keep the best trial as the model.

A trial trains the statement with its values under a derived name, ``<model>__trial_<key>``
(``key``: the trial's number locally, its name under Katib), its values and search in the
model's metadata; it prints its validation metrics as ``name=value`` lines (what Katib's
StdOut collector reads). A trial whose values do not train (a :class:`ModelError`) records
its error instead.

The search's last step reads the trials of this search back from the model store, saves the
best one (by ``search.metric`` and ``search.goal``) as the model, writes every trial to the
trials table and drops the trial models. A search cancelled while its trials train keeps
none of them (:func:`discard_trials`).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns, Datasource
from sqlml.datasources.arrays import object_array
from sqlml.errors import ModelError, SqlmlError
from sqlml.models.store import ModelStore
from sqlml.runtime import lineage
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml.search_space import as_text, decode, default_goal
from sqlml.statements.train import handler as training

SUCCEEDED, FAILED = "succeeded", "failed"
_TRIAL_INFIX = "__trial_"


def trial_model(model: str, key: str) -> str:
    """The name a trial's model is stored under until the search ends."""
    return f"{model}{_TRIAL_INFIX}{key}"


def fingerprint(statement: ir.SearchStatement) -> str:
    """What makes trials part of this search: everything the search trains, not where from."""
    fields = dataclasses.asdict(statement)
    for name in ("id", "text", "line", "column", "trial"):
        fields.pop(name, None)
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def run_trial(statement: ir.TrialStatement, context: Context) -> Outcome:
    """Train one trial and store it under its derived name; its metrics as ``name=value``."""
    datasource = context.datasource
    _check_trials_table(statement, datasource)  # before training: the search would fail last
    key = statement.trial["trial"]
    values = decode(statement.space, statement.trial)
    name = trial_model(statement.model, key)
    trained = ir.TrainStatement(
        **{
            field.name: getattr(statement, field.name)
            for field in dataclasses.fields(ir.TrainStatement)
        }
        | {"attributes": {**statement.attributes, **values}, "model": name}
    )
    record = {"key": key, "values": values, "search": fingerprint(statement)}
    try:
        _, metadata = training.train_and_save(
            trained, context, {"trial": {**record, "status": SUCCEEDED}}
        )
    except ModelError as error:  # the values do not train; the database's errors propagate
        failed = {**record, "status": FAILED, "error": error.message}
        ModelStore(datasource).save(name, _failure_metadata(trained, failed), b"", context.token)
        return Outcome(summary=f"trial {key} failed: {error.message}")
    metrics = metadata["metrics"]
    shown = ", ".join(f"{n} = {as_text(v)}" for n, v in values.items())
    lines = [f"{metric}={value!r}" for metric, value in metrics.items()]
    return Outcome(summary="\n".join([f"trial {key} ({shown})", *lines]))


def _check_trials_table(statement: ir.SearchStatement, datasource: Datasource) -> None:
    """A :class:`CheckError` if the search may not write its trials table."""
    settings = statement.search
    datasource.check_target(settings["trials_table"], settings.get("replace_table", False))


def _failure_metadata(statement: ir.TrainStatement, trial: dict[str, Any]) -> dict[str, Any]:
    """A failed trial's record: what SHOW MODELS lists of a model, and the trial."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    fields = {"estimator": statement.estimator, "label": statement.label, "rows": 0}
    return {**fields, "statement": statement.text, "trained_at": now, "trial": trial}


def finish(statement: ir.SearchStatement, context: Context) -> Outcome:
    """Save the best trial as the model, every trial into the trials table."""
    datasource, token = context.datasource, context.token
    store = ModelStore(datasource)
    trials = _trials(statement, store)
    settings = statement.search
    metric = settings["metric"] or _default_metric(trials)
    goal = settings["goal"] or default_goal(metric)
    scored = [t for t in trials if math.isfinite(_score(t, metric))]
    if not scored:
        errors = [t["metadata"]["trial"].get("error") for t in trials]
        _drop(store, trials)
        raise ModelError(
            f"no trial of the search for {statement.model} has a validation {metric}",
            hint=f"the first trial's error: {next(filter(None, errors), 'none recorded')}",
        )
    sign = -1 if goal == "maximize" else 1
    best = min(scored, key=lambda t: (sign * _score(t, metric), t["number"]))
    table = settings["trials_table"]
    replace = settings.get("replace_table", False)
    datasource.write_table(table, _table(statement, trials), replace, token)
    results = [
        {key: value for key, value in t["metadata"]["trial"].items() if key != "search"}
        | {"trial": t["number"], "metrics": t["metadata"].get("metrics", {})}
        for t in trials
    ]
    metadata = {key: value for key, value in best["metadata"].items() if key != "trial"}
    if lineage.KEY in metadata:  # the best trial's training, saved by this step
        run = context.run
        metadata[lineage.KEY] = {**metadata[lineage.KEY], "run": run.run, "step": run.step}
    metadata["search"] = {
        **{key: settings[key] for key in ("algorithm", "seed", "trials")},
        "metric": metric,
        "goal": goal,
        "best_trial": best["number"],
        "trials_table": ".".join(table),
        "results": results,
    }
    stored = store.load(best["name"])
    version = store.save(statement.model, metadata, stored.data, token)
    _drop(store, trials)
    return Outcome(
        model=(statement.model, version),
        summary=f"searched {len(trials)} trials of {statement.model}: best trial "
        f"{best['number']} with validation {metric} {_score(best, metric):.4g}, saved as "
        f"{statement.model}; every trial in {'.'.join(table)}",
    )


def discard_trials(statement: ir.SearchStatement, datasource: Datasource) -> str:
    """Drop this search's trials stored so far (by this trial's step, or an earlier run's):
    a cancelled search keeps none, for it never ends to drop them. What it did, for the log;
    an error leaves the trials until a new search."""
    store = ModelStore(datasource)
    try:
        trials = _stored(statement, store)
        _drop(store, trials)
    except SqlmlError as error:  # the cancellation stands
        return f"the search's trials could not be dropped: {error.message}"
    names = [trial["name"] for trial in trials]
    return f"dropped the search's trials: {', '.join(names)}" if names else ""


def trials_kept(statement: ir.SearchStatement, datasource: Datasource) -> bool:
    """Whether trials of this search are stored (its last step did not end it)."""
    return bool(_stored(statement, ModelStore(datasource)))


def _stored(statement: ir.SearchStatement, store: ModelStore) -> list[dict[str, Any]]:
    """This search's stored trials: name, key (number or Katib trial name), metadata."""
    prefix, mark = trial_model(statement.model, ""), fingerprint(statement)
    return [
        {"name": name, "key": name[len(prefix) :], "metadata": metadata}
        for name, _, metadata in store.list()
        if name.startswith(prefix) and metadata.get("trial", {}).get("search") == mark
    ]


def _trials(statement: ir.SearchStatement, store: ModelStore) -> list[dict[str, Any]]:
    """This search's stored trials, numbered from 0 (by key: number or Katib trial name)."""
    found = _stored(statement, store)
    if not found:
        raise ModelError(
            f"the search for {statement.model} has no stored trials",
            hint="run its trials first: run the whole program",
        )
    found.sort(key=lambda t: (int(t["key"]) if t["key"].isdigit() else math.inf, t["key"]))
    return [{**trial, "number": number} for number, trial in enumerate(found)]


def _drop(store: ModelStore, trials: list[dict[str, Any]]) -> None:
    for trial in trials:
        store.drop(trial["name"])


def _default_metric(trials: list[dict[str, Any]]) -> str:
    """accuracy for classifiers, ndcg for rankers, rmse for regressors (from the trials)."""
    for trial in trials:
        metrics = trial["metadata"].get("metrics", {})
        for metric in ("accuracy", "ndcg", "rmse"):
            if f"validation_{metric}" in metrics:
                return metric
    return "accuracy"


def _score(trial: dict[str, Any], metric: str) -> float:
    value = trial["metadata"].get("metrics", {}).get(f"validation_{metric}")
    return float("nan") if value is None else float(value)


def _table(statement: ir.SearchStatement, trials: list[dict[str, Any]]) -> Columns:
    """trial, each searched attribute's value, each validation metric, status."""
    columns: Columns = {"trial": np.array([t["number"] for t in trials], dtype=np.int64)}
    for name in sorted(statement.space):
        values = [t["metadata"]["trial"]["values"][name] for t in trials]
        columns[name.replace(".", "_")] = _column(values)
    metrics = sorted(
        {m for t in trials for m in t["metadata"].get("metrics", {}) if m.startswith("validation_")}
    )
    for metric in metrics:
        values = [t["metadata"].get("metrics", {}).get(metric) for t in trials]
        columns[metric] = np.array([np.nan if v is None else v for v in values], np.float64)
    columns["status"] = object_array([t["metadata"]["trial"]["status"] for t in trials])
    return columns


def _column(values: list[Any]) -> np.ndarray:
    """Numbers and booleans as such, strings as text, lists as JSON text."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    return object_array([as_text(v) for v in values])
