"""Hyperparameter search in TO TRAIN: candidate values (CHOICE, UNIFORM, LOG_UNIFORM,
INT_RANGE; SQLFlow's Katib ranges ``range.<name> = [low, high]`` too) checked against the
estimator's attribute schemas, and the ``search.*`` settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.metrics import (
    METRICS,
    find_metric,
    goal,
    split_names,
    task_metrics,
    unknown_metric_hint,
)
from sqlml.models.estimator import Estimator
from sqlml.models.registry import family
from sqlml.search_space import ALGORITHMS, DEFAULT_RANDOM_TRIALS, GOALS, grid_points
from sqlml.semantics.attributes import Attr, check_attributes, check_related, own_name, warn

PREFIX = "search."
REPLACE = "output.replace"  # a setting too: whether the trials table may replace any table
DEFAULT_PARALLEL = 3  # Katib trials at once when search.parallel is not given
EARLY_STOPPING = ("medianstop",)  # Katib v0.19's early-stopping algorithms

SEARCH_ATTRIBUTES = {
    attr.name: attr
    for attr in (
        Attr(
            "search.trials",
            "int",
            None,
            f"trials to run; default: every point of the grid (grid), {DEFAULT_RANDOM_TRIALS} "
            "(random); a grid runs its first search.trials points",
            minimum=1,
        ),
        Attr(
            "search.algorithm",
            "string",
            "random",
            "random: seeded draws from every candidate; grid: every combination of CHOICE and "
            "INT_RANGE values",
            choices=ALGORITHMS,
        ),
        Attr("search.seed", "int", 0, "seed of the random search's draws", minimum=0),
        Attr(
            "search.metric",
            "string",
            None,
            "the validation metric that ranks the trials: any name validation.metrics takes "
            "(sqlml's, scikit-learn's, Keras's); default: accuracy (classifiers), rmse "
            "(regressors), ndcg (rankers)",
        ),
        Attr(
            "search.goal",
            "string",
            None,
            "maximize or minimize search.metric; default: minimize losses, errors and wrong "
            "counts (log_loss, mae, mse, rmse, mean_squared_error, FalsePositives...), maximize "
            "the others",
            choices=GOALS,
        ),
        Attr(
            "search.parallel",
            "int",
            None,
            f"on Kubernetes, Katib trials run at once (default: {DEFAULT_PARALLEL}, at most "
            "search.trials); locally, trials share the executor's --jobs workers",
            minimum=1,
        ),
        Attr(
            "search.early_stopping",
            "string",
            None,
            "on Kubernetes, Katib's early stopping of the trials: medianstop stops a trial "
            "whose search.metric, averaged over its first reports, is worse than the median "
            "of the finished trials'; local searches run every trial to its end",
            choices=EARLY_STOPPING,
        ),
        Attr(
            "search.early_stopping.min_trials",
            "int",
            None,
            "medianstop: the trials that must have succeeded before it stops any (Katib's "
            "min_trials_required; default: Katib's, 3)",
            minimum=1,
            only_with=("search.early_stopping", EARLY_STOPPING, None),
        ),
        Attr(
            "search.early_stopping.start_step",
            "int",
            None,
            "medianstop: the reports of a trial's metric averaged before it is compared "
            "(Katib's start_step; default: Katib's, 4)",
            minimum=1,
            only_with=("search.early_stopping", EARLY_STOPPING, None),
        ),
        Attr(
            "search.trials_table",
            "string",
            None,
            "the table that receives every trial's values, metrics and status; default: "
            "<model>_trials",
        ),
        Attr(
            REPLACE,
            "bool",
            False,
            "replace the trials table even when sqlml did not write it or the SELECT reads "
            "it (without it, only a table sqlml wrote is replaced; sqlml's own tables never are)",
        ),
    )
}

_HINT = (
    "give candidates to search, e.g. max_depth = CHOICE(4, 6, 8) or eta = UNIFORM(0.01, 0.3); "
    "see docs/language.md"
)


def split(
    attributes: Sequence[ast.Attribute],
) -> tuple[tuple[ast.Attribute, ...], tuple[ast.Attribute, ...], tuple[ast.Attribute, ...]]:
    """The plain attributes, those with candidates and the settings (``search.*`` and
    ``output.replace``); a Katib range as the candidates it stands for."""
    attributes = [_katib_range(attribute) for attribute in attributes]
    seen: set[str] = set()
    for attribute in attributes:
        if attribute.name in seen:
            raise _error(f"attribute {attribute.name} is given twice", attribute.pos, None)
        seen.add(attribute.name)
    settings = tuple(a for a in attributes if a.name.startswith(PREFIX) or a.name == REPLACE)
    candidates = tuple(
        a for a in attributes if isinstance(a.value, ast.Candidates) and a not in settings
    )
    plain = tuple(a for a in attributes if a not in candidates and a not in settings)
    return plain, candidates, settings


KATIB_RANGE = "range."  # SQLFlow's Katib submitter: range.<parameter> = [low, high]
_KATIB_NAMES = {"num_round": "train.num_boost_round"}  # XGBoost's command-line name


def _katib_range(attribute: ast.Attribute) -> ast.Attribute:
    """``range.<name> = [low, high]`` (SQLFlow's Katib submitter) as ``<name> =
    INT_RANGE(low, high)`` (UNIFORM for numbers that are not all integers), with a warning
    naming that spelling."""
    if not attribute.name.startswith(KATIB_RANGE):
        return attribute
    value, rest = attribute.value, attribute.name.removeprefix(KATIB_RANGE)
    name = _KATIB_NAMES.get(rest, rest)
    pair = value if isinstance(value, tuple) else ()
    numbers = [v for v in pair if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(pair) != 2 or len(numbers) != 2:
        raise _error(
            f"attribute {attribute.name} must be a list of two numbers, [low, high] "
            f"(got {value!r})",
            attribute.pos,
            f"SQLFlow's Katib range of {name}: {attribute.name} = [2, 8]",
        )
    low, high = numbers
    function = "INT_RANGE" if isinstance(low, int) and isinstance(high, int) else "UNIFORM"
    written = f"{name} = {function}({low}, {high})"
    warn(attribute.pos, f"{attribute.name}: SQLFlow's Katib range, taken as {written} (write that)")
    candidates = ast.Candidates(function, (low, high), (attribute.pos,) * 2, attribute.pos)
    return replace(attribute, name=name, value=candidates)


def check(
    estimator: Estimator,
    candidates: Sequence[ast.Attribute],
    settings: Sequence[ast.Attribute],
    attributes: dict[str, Any],
    task: str,
    model: str,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The search space and the search's settings (defaults filled in)."""
    if not candidates and settings[0].name == REPLACE:
        raise _error(
            "TO TRAIN writes no table: output.replace is for the trials table of a "
            "hyperparameter search",
            settings[0].pos,
            "remove it (a model is saved as its next version, never replaced)",
        )
    if not candidates:
        raise _error(
            f"{settings[0].name} is set, but no attribute has candidates", settings[0].pos, _HINT
        )
    for attribute in settings:
        if isinstance(attribute.value, ast.Candidates):
            raise _error(
                f"{attribute.name} takes one value, not {attribute.value.function}(...)",
                attribute.pos,
                "search the training's attributes, not the search's settings",
            )
    search = check_attributes(settings, SEARCH_ATTRIBUTES, "a hyperparameter search")
    candidates = [replace(a, name=own_name(a.name, estimator.attributes)) for a in candidates]
    space = {a.name: _entry(a, a.value, estimator) for a in candidates}
    for attribute in candidates:
        check_related(attribute, estimator.attributes, attributes)
    given = {attribute.name: attribute for attribute in settings}
    _check_validation(attributes, candidates[0])
    _check_distribution(attributes, candidates[0])
    if search["search.algorithm"] == "grid":
        for attribute in candidates:
            if space[attribute.name]["kind"] not in ("choice", "int_range"):
                raise _error(
                    f"a grid search cannot enumerate {attribute.value.function}",
                    attribute.value.pos,
                    "use CHOICE or INT_RANGE, or search.algorithm = random",
                )
        points = grid_points(space)
        trials = min(search.get("search.trials") or points, points)
    else:
        trials = search.get("search.trials", DEFAULT_RANDOM_TRIALS)
    metric, default_goal = _metric(given.get("search.metric"), task, attributes, estimator.family)
    parallel = search.get("search.parallel") or min(DEFAULT_PARALLEL, trials)
    if parallel > trials:
        raise _error(
            f"search.parallel is {parallel}, more than the {trials} trials",
            given["search.parallel"].pos,
            f"set search.parallel to at most {trials}",
        )
    table = search.get("search.trials_table") or f"{model}_trials"
    return space, {
        "trials": trials,
        "algorithm": search["search.algorithm"],
        "seed": search["search.seed"],
        "metric": metric,
        "goal": search.get("search.goal") or default_goal,
        "parallel": parallel,
        "trials_table": table.split("."),
        "replace_table": search[REPLACE],
        **_early_stopping(search),
    }


def _early_stopping(search: dict[str, Any]) -> dict[str, Any]:
    """``early_stopping``: Katib's algorithm and its settings, by Katib's names (none when
    not asked for, so that searches without it keep their IR)."""
    algorithm = search.get("search.early_stopping")
    if algorithm is None:
        return {}
    names = {"min_trials": "min_trials_required", "start_step": "start_step"}
    settings = {
        katib: search[f"search.early_stopping.{own}"]
        for own, katib in names.items()
        if f"search.early_stopping.{own}" in search
    }
    return {"early_stopping": {"algorithm": algorithm, "settings": settings}}


def _entry(attribute: ast.Attribute, found: ast.Candidates, estimator: Estimator) -> dict:
    """One searched attribute: its candidates checked against its schema."""
    if attribute.name.startswith("validation."):
        raise _error(
            f"{attribute.name} cannot be searched: every trial is measured on the same rows",
            attribute.pos,
            f"give {attribute.name} one value",
        )
    spec = estimator.attributes.get(attribute.name)
    if spec is None and not attribute.name.startswith(estimator.open_prefix or "\0"):
        _checked(attribute, 0, attribute.pos, estimator)  # says it is unknown
    if spec is not None and spec.ignored is not None:
        raise _error(
            f"{attribute.name} cannot be searched: sqlml does not apply it ({spec.ignored})",
            attribute.pos,
            f"remove {attribute.name}",
        )
    kind = found.function.lower()
    for value, pos in zip(found.values, found.positions, strict=True):
        if isinstance(value, ast.Candidates):
            raise _error(
                f"{value.function}(...) cannot be a candidate itself",
                pos,
                "list plain values: CHOICE(4, 6, 8)",
            )
    checked = [
        _checked(attribute, value, pos, estimator)
        for value, pos in zip(found.values, found.positions, strict=True)
    ]
    entry: dict[str, Any] = {"kind": kind, "type": spec.type if spec else None}
    if kind == "choice":
        if not checked:
            raise _error("CHOICE needs at least one candidate", found.pos, "e.g. CHOICE(4, 6, 8)")
        return {**entry, "values": checked}
    if len(checked) != 2:
        raise _error(
            f"{found.function} takes two bounds, low and high, not {len(checked)}",
            found.pos,
            f"e.g. {found.function}(1, 4)",
        )
    numeric = ("int", "float") if kind == "int_range" else ("float",)
    wanted = "integers" if kind == "int_range" else "numbers"
    for value, pos in zip(found.values, found.positions, strict=True):
        integer = isinstance(value, int) and not isinstance(value, bool)
        if not (integer or (kind != "int_range" and isinstance(value, float))):
            raise _error(f"{found.function} bounds must be {wanted}, not {value!r}", pos, None)
    if spec is not None and spec.type not in numeric:
        raise _error(
            f"{found.function} gives {wanted}, but {attribute.name} takes {spec.type} values",
            found.pos,
            "use CHOICE(...)" if kind == "int_range" or spec.type != "int" else "use INT_RANGE",
        )
    low, high = found.values if kind == "int_range" else checked  # INT_RANGE: a range of ints
    if low > high or (low == high and kind != "int_range"):
        raise _error(
            f"{found.function}'s low bound {low} must be below its high bound {high}",
            found.positions[0],
            None,
        )
    if kind == "log_uniform" and low <= 0:
        raise _error("LOG_UNIFORM's bounds must be above 0", found.positions[0], None)
    return {**entry, "low": low, "high": high}


def _checked(
    attribute: ast.Attribute, value: ast.Value, pos: ast.Position, estimator: Estimator
) -> Any:
    """``value`` checked as the attribute's value, errors pointing at ``pos``."""
    candidate = ast.Attribute(attribute.name, value, pos)
    return check_attributes(
        [candidate], estimator.attributes, estimator.name, estimator.open_prefix, related=False
    )[attribute.name]


def _task(task: str, attributes: dict[str, Any], family_name: str) -> str | None:
    """The task of the trials: a ranker's by its objective, else ``task``, else (``auto``)
    its objective's; None when only the labels can tell."""
    learns = family(family_name).objective_task(attributes.get("objective"))
    if learns == "ranker":
        return "ranker"
    return task if task != "auto" else learns


def _metric(
    given: ast.Attribute | None, task: str, attributes: dict[str, Any], family_name: str
) -> tuple[str | None, str | None]:
    """The metric that ranks the trials, under the name the trials report it by (their
    ``validation_<name>``), and its default goal; (None, None) when only the data will tell.

    ``search.metric`` takes any name ``validation.metrics`` takes and maps it as it does
    (``AUC`` is reported as ``auc``, ``accuracy_score`` as written); a name the trials
    compute only when asked is added to ``attributes``' ``validation.metrics``.
    """
    kind = _task(task, attributes, family_name)
    if given is None:
        default = {"classifier": "accuracy", "regressor": "rmse", "ranker": "ndcg"}.get(kind or "")
        found = find_metric(default) if default else None
        return (default, goal(found)) if found else (None, None)
    name = str(given.value)  # a string: the settings' schema says so
    metric = find_metric(name)
    if metric is None:
        hint = unknown_metric_hint(name)
        raise _error(f"unknown metric {name} in search.metric", given.pos, hint)
    if kind is not None and metric.task != kind:
        raise _error(
            f"search.metric {name} does not apply to a {kind}",
            given.pos,
            f"choose from {task_metrics(kind)}",
        )
    chosen = split_names(attributes.get("validation.metrics") or "")
    reported = {m.name.lower(): (n, m) for n in chosen if (m := find_metric(n)) is not None}
    other = next(((n, m.task) for n, m in reported.values() if m.task != metric.task), None)
    if other is not None:
        raise _error(
            f"search.metric {name} measures a {metric.task} but validation.metrics' "
            f"{other[0]} a {other[1]}",
            given.pos,
            "rank the trials by a metric of your model's task",
        )
    if metric.name.lower() in reported:
        return reported[metric.name.lower()][1].name, goal(metric)
    if metric.name not in METRICS:  # not one of the task's own metrics, always reported
        attributes["validation.metrics"] = ",".join([*chosen, name])
    return metric.name, goal(metric)


def _check_validation(attributes: dict[str, Any], first: ast.Attribute) -> None:
    if not attributes.get("validation.select") and not attributes.get("validation.split"):
        raise _error(
            "a hyperparameter search ranks its trials on validation rows, but "
            "validation.split is 0",
            first.pos,
            "give validation.select or a validation.split above 0",
        )


def _check_distribution(attributes: dict[str, Any], first: ast.Attribute) -> None:
    if attributes.get("train.distributed") or (
        attributes.get("train.distributed") is None
        and ("train.workers" in attributes or "train.ps" in attributes)
    ):
        raise _error(
            "the trials of a hyperparameter search train in one process each",
            first.pos,
            "remove train.distributed, train.workers and train.ps",
        )


def _error(message: str, pos: ast.Position, hint: str | None) -> CheckError:
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)
