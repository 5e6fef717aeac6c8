"""SHOW TRAIN, SHOW MODELS, SHOW MODEL VERSIONS, DESCRIBE MODEL, DROP MODEL and ALTER MODEL
on the model store."""

from __future__ import annotations

import json

from sqlml import ir
from sqlml.datasources import ResultSet
from sqlml.errors import ModelError
from sqlml.models.store import ModelStore
from sqlml.runtime.context import Context
from sqlml.runtime.lineage import described
from sqlml.runtime.outcome import Outcome

# SHOW TRAIN's columns, as SQLFlow names them (its executor's ExecuteShowTrain).
SHOW_TRAIN_COLUMNS = ["Model", "Train Statement"]


def show_train(statement: ir.ShowTrainStatement, context: Context) -> Outcome:
    store = ModelStore(context.datasource)
    metadata = store.load(statement.model, statement.version, check=False).metadata
    return Outcome(result=ResultSet(SHOW_TRAIN_COLUMNS, [(statement.model, metadata["statement"])]))


UNREADABLE = "(metadata unreadable)"


def show_models(statement: ir.ShowModelsStatement, context: Context) -> Outcome:
    """The newest version of every model. One whose stored metadata is damaged is listed
    with its name and version, ``(metadata unreadable)`` as its estimator and NULL in the
    other columns, and named in the summary (DESCRIBE MODEL says what is wrong)."""
    rows, damaged = [], []
    for name, version, meta in ModelStore(context.datasource).catalog():
        if isinstance(meta, ModelError):
            rows.append((name, version, UNREADABLE, None, None, None))
            damaged.append(f"{name} (version {version})")
        else:
            rows.append(
                (name, version, meta["estimator"], meta["label"], meta["rows"], meta["trained_at"])
            )
    columns = ["model", "version", "estimator", "label", "rows", "trained_at"]
    summary = None
    if damaged:
        summary = f"the metadata of {', '.join(damaged)} is unreadable; DESCRIBE MODEL says why"
    return Outcome(result=ResultSet(columns, rows), summary=summary)


def show_model_versions(statement: ir.ShowModelVersionsStatement, context: Context) -> Outcome:
    """Every stored version (of one model), oldest first: its aliases, estimator, metrics,
    rows, who trained it and when."""
    store = ModelStore(context.datasource)
    if statement.model is not None:
        store.resolve(statement.model, None)  # an error if there is no such model
    aliases = store.all_aliases()
    rows = []
    for name, version, meta in store.versions(statement.model):
        named = ", ".join(a for a, v in aliases.get(name, {}).items() if v == version)
        if isinstance(meta, ModelError):
            rows.append((name, version, named, UNREADABLE, None, None, None, None))
            continue
        lineage = meta.get("lineage") or {}
        user, host = lineage.get("user"), lineage.get("host")  # a pod's user may be unknown
        creator = f"{user}@{host}" if user and host else user or host
        metrics = _metrics(meta["metrics"])
        rows.append(
            (
                name,
                version,
                named,
                meta["estimator"],
                metrics,
                meta["rows"],
                creator,
                meta["trained_at"],
            )
        )
    columns = ["model", "version", "aliases", "estimator", "metrics", "rows", "created_by"]
    return Outcome(result=ResultSet([*columns, "trained_at"], rows))


def _metrics(metrics: dict) -> str | None:
    """``name value`` pairs, numbers to four significant digits, as training reports them."""
    shown = [
        f"{name} {value:.4g}" if isinstance(value, int | float) else f"{name} {json.dumps(value)}"
        for name, value in sorted(metrics.items())
    ]
    return ", ".join(shown) or None


def describe_model(statement: ir.DescribeModelStatement, context: Context) -> Outcome:
    store = ModelStore(context.datasource)
    stored = store.load(statement.model, statement.version, check=False)
    meta = stored.metadata
    labels = meta["labels"]
    aliases = [a for a, v in store.aliases(statement.model).items() if v == stored.version]
    rows = [
        ("version", str(stored.version)),
        ("aliases", ", ".join(aliases)),
        ("estimator", meta["estimator"]),
        ("format", meta["format"]),
        ("task", labels["task"]),
        ("label", meta["label"]),
        ("classes", json.dumps(labels["classes"])),
        ("features", ", ".join(ir.FeatureColumn.from_dict(f).name for f in meta["features"])),
        ("attributes", json.dumps(meta["attributes"], sort_keys=True)),
        ("metrics", json.dumps(meta["metrics"], sort_keys=True)),
        ("rows", str(meta["rows"])),
        ("validation", json.dumps(meta.get("validation"), sort_keys=True)),
        ("base_model", json.dumps(meta.get("base_model"), sort_keys=True)),
        ("trained_at", meta["trained_at"]),
        ("sqlml_version", meta["sqlml_version"]),
        *_imported(meta),
        *described(meta),
    ]
    return Outcome(result=ResultSet(["property", "value"], rows))


def _imported(meta: dict) -> list[tuple[str, str]]:
    """DESCRIBE MODEL's row of where an imported model came from (none for a trained one)."""
    if "imported" not in meta:
        return []
    return [("imported", json.dumps(meta["imported"], sort_keys=True))]


def drop_model(statement: ir.DropModelStatement, context: Context) -> Outcome:
    if ModelStore(context.datasource).drop(statement.model):
        return Outcome(summary=f"dropped model {statement.model}")
    if statement.if_exists:
        return Outcome(summary=f"model {statement.model} does not exist; nothing dropped")
    raise ModelError(
        f"model {statement.model} does not exist in {context.datasource.url}",
        model=statement.model,
        hint="use DROP MODEL IF EXISTS to ignore a missing model; SHOW MODELS lists them",
    )


def alter_model(statement: ir.AlterModelStatement, context: Context) -> Outcome:
    """Move, drop or roll back an alias, promote a version, or set the retention; each one
    transaction."""
    store, model = ModelStore(context.datasource), statement.model
    alias = statement.alias
    if statement.action in ("set_alias", "promote"):
        alias = "champion" if statement.action == "promote" else alias
        assert alias is not None and statement.version is not None
        before, now = store.set_alias(model, alias, statement.version)
        was = "new" if before is None else f"was version {before}"
        if statement.action == "promote":
            return Outcome(summary=f"promoted version {now} of model {model} to {alias} ({was})")
        return Outcome(summary=f"set alias {alias} of model {model} to version {now} ({was})")
    if statement.action == "drop_alias":
        assert alias is not None
        version = store.drop_alias(model, alias)
        return Outcome(summary=f"dropped alias {alias} of model {model} (version {version})")
    if statement.action == "rollback_alias":
        assert alias is not None
        moved_from, moved_to = store.rollback_alias(model, alias)
        return Outcome(
            summary=f"rolled back alias {alias} of model {model} to version {moved_to} "
            f"(from version {moved_from})"
        )
    deleted = store.set_retention(model, statement.keep)
    kept = {None: "all its versions", 1: "its newest version"}.get(
        statement.keep, f"its {statement.keep} newest versions"
    )
    kept += "" if statement.keep is None else " and those aliases name"
    gone = f"; deleted versions {', '.join(map(str, deleted))}" if deleted else ""
    return Outcome(summary=f"model {model} keeps {kept}{gone}")
