"""The analysis of TO TRAIN: the estimator, its attributes and feature columns checked, a
hyperparameter search made of candidate values, the IR made."""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from sqlml.grammar import ast
from sqlml.ir import FeatureColumn
from sqlml.models.estimator import warn
from sqlml.models.registry import families, family
from sqlml.semantics import search_spaces
from sqlml.semantics.attributes import check_attributes, is_architecture, own_name
from sqlml.semantics.estimators import (
    Estimator,
    closest_estimator,
    find_estimator,
    user_estimator,
)
from sqlml.semantics.feature_columns import feature_columns
from sqlml.semantics.lowering import (
    Output,
    error,
    lower_selecting,
    single_part,
    value_start,
    where,
)
from sqlml.semantics.metric_names import check_metrics, training_task
from sqlml.semantics.sql_check import check_query
from sqlml.statements.train import syntax
from sqlml.statements.train.ir import SearchStatement, TrainStatement


def lower(statement: syntax.TrainNode, prefix: str, dialect: str) -> TrainStatement:
    """The IR of a TO TRAIN (its SELECTs in sqlglot's ``dialect``): a search if a WITH value
    is a set of candidates."""
    return lower_selecting(statement, prefix, dialect, "TO TRAIN", statement.into, _lower, _output)


def _output(statement: syntax.TrainNode, lowered: TrainStatement) -> Output | None:
    """A search writes its trials table; a training writes none."""
    if not isinstance(lowered, SearchStatement):
        return None
    given = next((a for a in statement.attributes if a.name == "search.trials_table"), None)
    return Output(
        lowered.search["trials_table"],
        given.pos if given else statement.into.pos,
        lowered.search["replace_table"],
        "the hyperparameter search",
        "name another table in search.trials_table",
    )


def _lower(statement: syntax.TrainNode, step_id: str, dialect: str) -> TrainStatement:
    estimator = _estimator(statement.estimator)
    _check_label(statement, estimator)
    plain, candidates, settings = search_spaces.split(statement.attributes)
    attributes = check_attributes(
        plain, estimator.attributes, estimator.name, estimator.open_prefix
    )
    _check_validation_select(statement, dialect, attributes)
    _check_streams(statement, estimator, attributes)
    family(estimator.family).check_training(statement, estimator, attributes)
    attributes = _one_process(statement, estimator, attributes)
    repeated = None
    if statement.using is not None:
        trained = dataclasses.replace(statement, attributes=plain + candidates)
        attributes, repeated = _continued(trained, estimator, attributes)
    label = single_part(statement.label, "LABEL column") if statement.label else ""
    task = estimator.task_for(attributes)
    _check_metrics(statement, attributes, task, estimator.family)
    attributes = _translated(statement, estimator, attributes)
    searched: dict[str, Any] = {}
    if candidates or settings:
        space, settings_ = search_spaces.check(
            estimator, candidates, settings, attributes, task, str(statement.into)
        )
        space = {estimator.renamed.get(name) or name: values for name, values in space.items()}
        searched = {"space": space, "search": settings_}
        for name in space:
            attributes.pop(name, None)
    make = SearchStatement if searched else TrainStatement
    return make(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        estimator=estimator.name,
        family=estimator.family,
        task=task,
        attributes={**attributes, **estimator.fixed},
        features=_with_read_columns(
            feature_columns(statement, estimator, label), estimator, attributes
        ),
        label=label,
        model=str(statement.into),
        base_model=str(statement.using) if statement.using is not None else None,
        base_version=getattr(statement.using, "version", None),
        repeated=repeated,
        training_attributes=_training_attributes(estimator) if statement.using else None,
        **searched,
    )


def _with_read_columns(
    features: list[FeatureColumn], estimator: Estimator, attributes: dict[str, Any]
) -> list[FeatureColumn]:
    """``features`` (COLUMN's) and the columns the estimator's :attr:`~Estimator.reads`
    attributes name that COLUMN leaves out; without COLUMN, every column is read anyway."""
    if not features:
        return features
    listed = {feature.column for feature in features}
    named = [attributes[name] for name in estimator.reads if name in attributes]
    return features + [FeatureColumn("auto", column) for column in named if column not in listed]


def _estimator(name: ast.Name) -> Estimator:
    """A known estimator, or the user's model builder a dotted name imports."""
    estimator = find_estimator(str(name))
    if estimator is None and len(name.parts) > 1:
        builders = next(filter(None, (known.builders for known in families().values())), None)
        hint = f"a user model is {builders}; see docs/language.md"
        try:
            estimator = user_estimator(str(name))
        except TypeError as failure:
            raise error(f"estimator {name}: {failure}", name.pos, hint) from None
        except (OSError, SyntaxError, ValueError) as failure:  # reading the user's module
            raise error(
                f"estimator {name}: reading its module failed: {type(failure).__name__}: {failure}",
                name.pos,
                hint,
            ) from None
    if estimator is None:
        closest = closest_estimator(str(name))
        raise error(
            f"unknown estimator {name}",
            name.pos,
            f"did you mean {closest}?" if closest else "see docs/language.md for the estimators",
        )
    return estimator


def _check_label(statement: syntax.TrainNode, estimator: Estimator) -> None:
    """A LABEL for an estimator that learns from one, none for one that learns without."""
    if estimator.labelled and statement.label is None:
        raise error(
            f"TO TRAIN {estimator.name} needs a LABEL: the column to learn to predict",
            statement.into.pos,
            "add LABEL <column> before INTO",
        )
    if not estimator.labelled and statement.label is not None:
        raise error(
            f"TO TRAIN {estimator.name} learns without a LABEL",
            statement.label.pos,
            "remove LABEL: TO PREDICT writes what the model finds (a cluster id, 1 or -1)",
        )
    validating = [a for a in statement.attributes if a.name.startswith("validation.")]
    if not estimator.labelled and validating:
        raise error(
            f"TO TRAIN {estimator.name} learns without a LABEL: it has nothing to validate with "
            f"{validating[0].name}",
            validating[0].pos,
            f"remove {validating[0].name}",
        )


def _translated(
    statement: syntax.TrainNode, estimator: Estimator, attributes: dict[str, Any]
) -> dict[str, Any]:
    """The attributes under the family's names; a warning when the estimator stands for a
    model sqlml does not train exactly, and for attributes it ignores."""
    translated, ignored = estimator.translated(attributes)
    where = statement.estimator.pos
    if estimator.instead:
        warn(where.line, where.column, f"{estimator.name}: {estimator.instead}")
    if ignored:
        warn(where.line, where.column, f"{estimator.name} ignores {', '.join(ignored)}")
    return translated


def _check_streams(
    statement: syntax.TrainNode, estimator: Estimator, attributes: dict[str, Any]
) -> None:
    """``train.external_memory`` only for a family that trains on streamed batches."""
    if attributes.get("train.external_memory") and not family(estimator.family).streams:
        given = next(
            a
            for a in statement.attributes
            if own_name(a.name, estimator.attributes) == "train.external_memory"
        )
        raise error(
            f"{estimator.name} ({estimator.family} models) trains on rows in memory only, not "
            f"on streamed batches ({given.name})",
            given.pos,
            f"remove {given.name} (or set it to false)",
        )


def _one_process(
    statement: syntax.TrainNode, estimator: Estimator, attributes: dict[str, Any]
) -> dict[str, Any]:
    """The attributes of a family without a Kubeflow job (Keras, scikit-learn...), whose
    models train in one process: ``train.distributed = true`` refused, ``train.workers`` and
    ``train.ps`` left out with a warning (SQLFlow's PAI programs give them)."""
    if family(estimator.family).has_training_job():
        return attributes
    given = {own_name(a.name, estimator.attributes): a for a in statement.attributes}
    reason = (
        f"{estimator.name} ({estimator.family} models) trains in one process: sqlml does not "
        "distribute its training"
    )
    if attributes.get("train.distributed"):
        written = given["train.distributed"]
        distributing = next(f for f in families().values() if f.has_training_job())
        raise error(
            f"{reason}, so {written.name} = true cannot be honoured",
            written.pos,
            f"remove {written.name}; to train on several processes, use an {distributing.title} "
            "estimator with train.workers",
        )
    for name in ("train.workers", "train.ps"):
        if name in attributes:
            written = given[name]
            warn(written.pos.line, written.pos.column, f"{reason}; {written.name} is not applied")
    return {k: v for k, v in attributes.items() if k not in ("train.workers", "train.ps")}


def _check_metrics(
    statement: syntax.TrainNode, attributes: dict[str, Any], task: str, family_name: str
) -> None:
    """``validation.metrics``: known names of the training's task, kept as reported."""
    given = next((a for a in statement.attributes if a.name == "validation.metrics"), None)
    if given is None:
        return
    known = training_task(task, attributes, family_name)
    model = f"{statement.into} ({statement.estimator})"
    attributes["validation.metrics"] = check_metrics(given, known, model)


def _check_validation_select(
    statement: syntax.TrainNode, dialect: str, attributes: dict[str, Any]
) -> None:
    """Check ``validation.select`` with sqlglot; a final ``;`` (and what follows) is dropped."""
    select = attributes.get("validation.select")
    if select is None:
        return
    select = select.strip()
    try:
        last = sqlglot.tokenize(select, read=dialect)[-1]
    except (TokenError, IndexError):  # check_query says what is wrong
        last = None
    if last is not None and last.token_type == TokenType.SEMICOLON:
        select = select[: last.start].rstrip()
    attributes["validation.select"] = select
    attribute = next(a for a in statement.attributes if a.name == "validation.select")
    check_query(
        select, value_start(statement, attribute, inside_quotes=True), dialect, None, read_only=True
    )


def _training_attributes(estimator: Estimator) -> list[str]:
    """The stored names of ``estimator``'s attributes that are not its architecture: what a
    continued training does not keep of its base model's."""
    schema, renamed = estimator.attributes, estimator.renamed
    names = (renamed.get(name, name) for name, attr in schema.items() if not attr.architecture)
    return sorted(name for name in names if name is not None)


def _continued(
    statement: syntax.TrainNode, estimator: Estimator, attributes: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]] | None]:
    """The attributes of a training that continues a base model, whose architecture is its,
    and the architecture attributes the statement repeats (as SQLFlow allows: they must
    equal the base's, checked when it is loaded), under their stored names.

    Attributes outside the schema (a user model's own ``model.*``) are architecture too.
    """
    schema = estimator.attributes

    def architecture(name: str) -> bool:
        return is_architecture(name, schema)

    repeated: dict[str, dict[str, Any]] = {}
    for attribute in statement.attributes:
        if not architecture(attribute.name):
            continue
        if isinstance(attribute.value, ast.Candidates):
            raise error(
                f"attribute {attribute.name} comes from the base model {statement.using}",
                attribute.pos,
                f"remove its candidates: TO TRAIN ... USING {statement.using} keeps the base "
                f"model's {', '.join(name for name, attr in schema.items() if attr.architecture)}",
            )
        own = own_name(attribute.name, schema)
        stored = estimator.renamed.get(own, own)
        if stored is not None:
            repeated[stored] = {
                "written": attribute.name,
                "value": attributes[own],
                "line": attribute.pos.line,
                "column": attribute.pos.column,
            }
    kept = {name: value for name, value in attributes.items() if not architecture(name)}
    return kept, repeated or None
