"""Statements that apply a stored model to the rows of a SELECT: PREDICT, EVALUATE, EXPLAIN."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.errors import ModelError
from sqlml.metrics import (
    CLASSIFIER_METRICS,
    RANKER_METRICS,
    REGRESSOR_METRICS,
    classifier_metrics,
    ranker_metrics,
    regressor_metrics,
)
from sqlml.runtime import progress
from sqlml.runtime.datasource import Columns, Datasource, ResultSet
from sqlml.runtime.evaluate_plot import save_evaluation_plot
from sqlml.runtime.execute import Outcome
from sqlml.runtime.explain_plot import feature_values, save_summary_plot
from sqlml.runtime.feature_arrays import FeatureArrays, transform
from sqlml.runtime.feature_columns import value_texts
from sqlml.runtime.features import check_rows
from sqlml.runtime.labels import LabelEncoding, check_not_null, query_ids
from sqlml.runtime.model_store import ModelStore, StoredModel
from sqlml.runtime.models import family

SCORE_BATCH = 65536
MAX_COLUMN_NAME = 63  # PostgreSQL's limit (MySQL's is 64)
_PLAIN_CLASS = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Applied:
    """A stored model next to the features of a SELECT's rows."""

    model: StoredModel
    trainer: ModuleType
    labels: LabelEncoding
    columns: Columns
    features: FeatureArrays

    @property
    def metadata(self) -> dict[str, Any]:
        return self.model.metadata

    def scores(
        self, features: FeatureArrays | None = None, batch_size: int = SCORE_BATCH
    ) -> np.ndarray:
        """Class probabilities (classifiers) or values (regressors) for ``features`` or the rows."""
        features = self.features if features is None else features
        return self.trainer.predict_scores(self.model.data, features, self.metadata, batch_size)

    def truth(self, label: str) -> np.ndarray:
        """The label column encoded like the training labels."""
        if label not in self.columns:
            raise ModelError(
                f"LABEL column {label} is not in the result of the SELECT",
                hint=f"the SELECT returns: {', '.join(self.columns)}",
            )
        values = self.columns[label]
        check_not_null(label, values, "the SELECT")
        unknown = self.labels.unknown(values)
        if unknown:
            raise ModelError(
                f"LABEL column {label} has classes the model never saw: "
                f"{', '.join(map(repr, unknown[:5]))}",
                hint=f"the model knows {', '.join(map(repr, self.labels.classes))}",
            )
        return self.labels.encode(values)


def apply(model_name: str, select: str, datasource: Datasource) -> Applied:
    """Load ``model_name`` and the features of ``select``'s rows."""
    stored = ModelStore(datasource).load(model_name)
    trainer = family(stored.metadata["family"])
    if stored.metadata["format"] != trainer.FORMAT:
        raise ModelError(
            f"model {model_name} is stored as {stored.metadata['format']}, "
            "which this version of sqlml cannot read"
        )
    columns = datasource.read(select)
    check_rows(columns)
    features = transform(
        columns, [ir.FeatureColumn.from_dict(f) for f in stored.metadata["features"]]
    )
    labels = LabelEncoding.from_dict(stored.metadata["labels"])
    return Applied(stored, trainer, labels, columns, features)


def predict(statement: ir.PredictStatement, datasource: Datasource) -> Outcome:
    applied = apply(statement.model, statement.select, datasource)
    with progress.stage("predicting", total=applied.features.rows):
        scores = applied.scores(batch_size=statement.attributes["predict.batch_size"])
    extras = statement.attributes.get("predict.extra_outputs") or ""
    probabilities = "probabilities" in extras.split(",")
    classifier = applied.labels.task == "classifier"
    if probabilities and not classifier:
        raise ModelError(
            f"predict.extra_outputs = 'probabilities' needs a classifier; {statement.model} "
            "predicts numbers",
            hint="remove predict.extra_outputs",
        )
    dropped = (applied.metadata["label"], statement.result_column)
    output = {name: values for name, values in applied.columns.items() if name not in dropped}
    predicted = scores.argmax(axis=1) if classifier else scores
    output[statement.result_column] = np.asarray(applied.labels.decode(predicted))
    if probabilities:
        names = probability_columns(statement.result_column, applied.labels.classes)
        taken = [name for name in names if name in output]
        if taken:
            raise ModelError(
                f"predict.extra_outputs: the SELECT already returns {', '.join(taken)}",
                hint="rename those columns in the SELECT, or choose another result column",
            )
        output.update({name: scores[:, i] for i, name in enumerate(names)})
    datasource.write_table(statement.table, output)
    return Outcome(
        summary=f"predicted {applied.features.rows} rows into {'.'.join(statement.table)}."
        f"{statement.result_column} with {statement.model}"
    )


def probability_columns(result: str, classes: list[Any]) -> list[str]:
    """The names of the class probability columns, in the order of the classes.

    ``<result>_<class>`` when every class reads as lower-case letters, digits and ``_``
    (booleans as ``true``/``false``) and the names fit every database; else
    ``<result>_prob_<index>``.
    """
    texts = [
        str(c).lower() if isinstance(c, bool) else text
        for c, text in zip(classes, value_texts(np.array(classes, dtype=object)), strict=True)
    ]
    names = [f"{result}_{text}" for text in texts]
    plain = all(_PLAIN_CLASS.fullmatch(text) for text in texts)
    if plain and len(set(names)) == len(names) and max(map(len, names)) <= MAX_COLUMN_NAME:
        return names
    return [f"{result}_prob_{i}" for i in range(len(classes))]


def evaluate(statement: ir.EvaluateStatement, datasource: Datasource) -> Outcome:
    applied = apply(statement.model, statement.select, datasource)
    truth = applied.truth(statement.label)
    group = applied.metadata["attributes"].get("train.group_column")
    task = "ranker" if group else applied.labels.task
    applicable = {
        "classifier": CLASSIFIER_METRICS,
        "regressor": REGRESSOR_METRICS,
        "ranker": RANKER_METRICS,
    }[task]
    chosen = statement.attributes.get("validation.metrics")
    names = chosen.split(",") if chosen else applicable
    if not set(names) <= set(applicable):
        raise ModelError(
            f"{', '.join(sorted(set(names) - set(applicable)))} does not apply to a {task}",
            hint="choose from " + ", ".join(applicable),
        )
    plot = statement.attributes.get("evaluate.plot")
    if plot is not None and group:
        raise ModelError(
            f"evaluate.plot draws classifiers and regressors; {statement.model} is a ranker",
            hint="remove evaluate.plot",
        )
    scores = applied.scores()
    if group:
        groups = query_ids(applied.columns, group, "the SELECT")
        metrics = ranker_metrics(truth, scores, groups, names)
    elif task == "classifier":
        metrics = classifier_metrics(truth, scores, names)
    else:
        metrics = regressor_metrics(truth, scores, names)
    saved = ""
    if plot is not None:
        path = _plot_path(plot, datasource)
        save_evaluation_plot(path, task, truth, scores, _class_names(applied.labels))
        saved = f"; plot saved to {path}"
    datasource.write_table(
        statement.table, {name: np.array([value]) for name, value in metrics.items()}
    )
    shown = progress.format_metrics(metrics)
    return Outcome(summary=f"evaluated {statement.model} on {len(truth)} rows: {shown}{saved}")


def _class_names(labels: LabelEncoding) -> list[str]:
    """The classes as the plots name them."""
    return [str(c) for c in value_texts(np.array(labels.classes, dtype=object))]


def explain(statement: ir.ExplainStatement, datasource: Datasource) -> Outcome:
    """Rank the features by importance; with ``explain.plot``, also draw the attributions.

    TreeExplainer: XGBoost's own SHAP contributions of every row (per class for
    multiclass models); a feature's importance is their mean absolute value, summed over
    the classes. PermutationExplainer: per row, how much the loss grows when the feature's
    values are shuffled; the importance is its mean.
    """
    applied = apply(statement.model, statement.select, datasource)
    explainer = statement.explainer or (
        "TreeExplainer" if applied.metadata["family"] == "xgboost" else "PermutationExplainer"
    )
    if explainer == "TreeExplainer":
        if applied.metadata["family"] != "xgboost":
            raise ModelError(
                f"TreeExplainer explains tree models; {statement.model} is "
                f"{applied.metadata['estimator']}",
                hint="use PermutationExplainer",
            )
        attributions = applied.trainer.contributions(
            applied.model.data, applied.features, applied.metadata
        )
        importance = np.abs(attributions).mean(axis=0)
        if importance.ndim == 2:  # classes x features: sum over the classes
            importance = importance.sum(axis=0)
        measure = "SHAP value (contribution to the raw score)"
    else:
        attributions = _permutation_effects(applied, statement.attributes["explain.seed"])
        importance = attributions.mean(axis=0)
        measure = "loss increase when the feature is shuffled"
    features = np.array(applied.features.names, dtype=object)
    order = np.argsort(-importance, kind="stable")
    table = {"feature": features[order], "importance": importance[order].astype(np.float64)}
    plot = statement.attributes.get("explain.plot")
    saved = None
    if plot is not None:
        path = _plot_path(plot, datasource)
        classes = _class_names(applied.labels)
        save_summary_plot(
            path,
            attributions,
            applied.features.names,
            feature_values(applied.features),
            classes,
            measure,
        )
        saved = f"plot of {statement.model} saved to {path}"
    if statement.table is None:
        rows = list(zip(table["feature"].tolist(), table["importance"].tolist(), strict=True))
        return Outcome(result=ResultSet(["feature", "importance"], rows), summary=saved)
    datasource.write_table(statement.table, table)
    into = f"explained {statement.model} with {explainer} into {'.'.join(statement.table)}"
    return Outcome(summary=into if saved is None else f"{into}; {saved}")


def _plot_path(plot: str, datasource: Datasource) -> Path:
    """``explain.plot`` or ``evaluate.plot`` as a path: a relative one from the program's
    folder (else the working folder)."""
    path = Path(plot).expanduser()
    return path if path.is_absolute() else (datasource.base_dir or Path.cwd()) / path


def _permutation_effects(applied: Applied, seed: int) -> np.ndarray:
    """Rows x features: how much each row's loss grows when a feature's values (all its
    arrays) are shuffled. The loss is the log loss for classifiers, the squared error else."""
    truth = applied.truth(applied.metadata["label"])
    rng = np.random.default_rng(seed)

    def losses(features: FeatureArrays) -> np.ndarray:
        predicted = applied.scores(features)
        if applied.labels.task == "classifier":
            chosen = predicted[np.arange(len(truth)), truth].astype(np.float64)
            return -np.log(np.clip(chosen, 1e-15, 1))
        return (predicted.astype(np.float64) - truth.astype(np.float64)) ** 2

    features = applied.features
    baseline = losses(features)
    return np.column_stack(
        [
            losses(features.permuted(j, rng.permutation(features.rows))) - baseline
            for j in range(len(features.names))
        ]
    )
