"""Models pages of sqlml ui (routes listed in ROUTES): every model, each one's versions with
their estimator, attributes, training statement, lineage, metrics, plots and evaluations, a
comparison of two versions, and a hyperparameter search's trials.

Pages read metadata only (:mod:`sqlml.ui.model_catalog`); the plots are the files TO
EVALUATE and TO EXPLAIN drew of the version shown, and the metrics TO EVALUATE measured of
it, found through the run record (:mod:`sqlml.ui.recorded_plots`) or remembered from the
editor (:mod:`sqlml.ui.drawn_plots`); the lineage links to the run and step that trained it
(:mod:`sqlml.ui.model_lineage`); the trials' charts are drawn as inline SVG
(:mod:`sqlml.ui.svg_chart`).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from sqlml.datasources.redaction import scrubber
from sqlml.errors import DatasourceBusy, SqlmlError
from sqlml.models.store import ModelStore
from sqlml.ui.drawn_plots import drawn_plots
from sqlml.ui.model_catalog import (
    Version,
    VersionNumbers,
    newest_versions,
    number,
    version,
    version_numbers,
    versions,
)
from sqlml.ui.model_lineage import lineage_rows, metrics_text, step_url
from sqlml.ui.pages import datasource, page
from sqlml.ui.paging import PAGE_ROWS, page_number, page_of
from sqlml.ui.recorded_plots import Evaluation, Measured, png, recorded, step_plot
from sqlml.ui.svg_chart import Point, scatter

Endpoint = Callable[[Request], Awaitable[Response]]
SHOWN_METRICS = 4  # metrics in the list of models, validation metrics first
SUGGESTED_VERSIONS = 20  # newest version numbers the comparison's inputs suggest
_DETAILS = ("label", "rows", "validation", "base_model", "format", "trained_at", "sqlml_version")


def model_url(name: str) -> str:
    """The page of the model ``name``."""
    return f"/models/{quote(name, safe='')}"


async def models_page(request: Request) -> Response:
    def read() -> list[Version]:
        with datasource(request) as ds:
            return newest_versions(ds)

    found = await run_in_threadpool(read)
    query = request.query_params.get("q", "").strip()
    matched = [v for v in found if _matches(v, query.lower())] if query else found
    number = page_number(request.query_params.get("page")) or 1
    shown = page_of(matched, number, "/models", {"q": query})
    rows = [(v, model_url(v.name), _key_metrics(v.metrics)) for v in shown.rows]
    return page(
        request,
        "models.html",
        section="models",
        models=rows,
        shown=shown,
        q=query,
        total=len(found),
    )


def _matches(version: Version, query: str) -> bool:
    """Whether ``query`` (lower case) is in the model's name, estimator or task."""
    return any(query in text.lower() for text in (version.name, version.estimator, version.task))


async def model_page(request: Request) -> Response:
    name = request.path_params["name"]
    asked = request.query_params.get("version")  # a number or an alias
    chosen = _version_number(asked)
    aliases: dict[str, int] = {}

    def read() -> tuple[list[Version], Version | None, Measured]:
        nonlocal chosen
        with datasource(request) as ds:
            stored = versions(ds, name)
            if not stored:
                return stored, None, Measured([], [])
            aliases.update(ModelStore(ds).aliases(name))
            if asked and chosen is None:
                chosen = aliases.get(asked, 0)  # 0: no such alias, a missing version
            shown = version(ds, name, stored[0].version if chosen is None else chosen)
            if shown is None:
                return stored, None, Measured([], [])
            run_dir = request.app.state.settings.run_dir
            trained_at = shown.metadata.get("trained_at", "")
            return stored, shown, recorded(ds, run_dir, name, shown.version, trained_at)

    stored, shown, measured = await run_in_threadpool(read)
    if not stored:
        return _missing(request, name)
    if shown is None:
        return _missing(request, name, asked)
    url = model_url(name)
    number = page_number(request.query_params.get("page"))
    if number is None:  # the page holding the version shown
        position = next((i for i, v in enumerate(stored) if v.version == shown.version), 0)
        number = position // PAGE_ROWS + 1
    params = {"version": str(chosen)} if chosen is not None else {}
    return page(
        request,
        "model.html",
        section="models",
        name=name,
        url=url,
        version=shown,
        aliases=_aliases_of(aliases),
        versions=page_of(stored, number, url, params),
        newest=stored[0],
        other=stored[1] if stored[0].version == shown.version and len(stored) > 1 else stored[0],
        attributes=[(key, _shown(value)) for key, value in sorted(shown.attributes.items())],
        details=[(key, _shown(meta[key])) for key in _DETAILS if key in (meta := shown.metadata)],
        features=_features(shown.metadata),
        metrics=[(key, _number_text(value)) for key, value in shown.metrics.items()],
        plots=_plots(request, name, shown.version, measured),
        evaluations=[_evaluation(evaluation) for evaluation in measured.evaluations],
        lineage=lineage_rows(shown.metadata),
        trials=_trials(shown),
    )


async def compare_page(request: Request) -> Response:
    name = request.path_params["name"]
    asked = [_version_number(request.query_params.get(key)) for key in ("a", "b")]

    def read() -> tuple[VersionNumbers, list[Version | None]]:
        with datasource(request) as ds:
            stored = version_numbers(ds, name, SUGGESTED_VERSIONS)
            if not stored.count:
                return stored, []
            a = asked[0] or stored.newest[min(1, len(stored.newest) - 1)]
            b = asked[1] or stored.newest[0]
            return stored, [version(ds, name, a), version(ds, name, b)]

    stored, compared = await run_in_threadpool(read)
    if not stored.count:
        return _missing(request, name)
    first, second = compared
    if first is None or second is None:
        missing = asked[0] if first is None else asked[1]
        return _missing(request, name, missing)
    return page(
        request,
        "compare.html",
        section="models",
        name=name,
        url=model_url(name),
        a=first,
        b=second,
        stored=stored,
        sections=_comparison(first, second),
        trials=_trials(second) or _trials(first),
    )


async def plot_file(request: Request) -> Response:
    """A plot the model's page shows: the PNG a recorded step drew."""
    name, run_id, step = (request.path_params[key] for key in ("name", "run_id", "step"))
    settings = request.app.state.settings

    def find() -> Any:
        with datasource(request) as ds:
            return step_plot(settings.run_dir, run_id, step, name, ds.dialect)

    plot = await run_in_threadpool(find)
    if plot is None:
        return Response("no such plot", status_code=404, media_type="text/plain")
    return FileResponse(plot.path, media_type="image/png", headers={"Cache-Control": "no-cache"})


@dataclass(frozen=True)
class ShownPlot:
    """A plot on a model's page: what drew it (evaluate, explain), its image's address, its
    file, the statement, the recorded run (None: this server's editor) and the version of
    the model it was drawn of."""

    kind: str
    src: str
    path: Path
    statement: str
    run_id: str | None
    version: int


def _plots(request: Request, name: str, number: int, measured: Measured) -> list[ShownPlot]:
    """The plots of version ``number`` of the model ``name``: those this server's editor drew
    of it (read into the page), then those of the recorded runs (by their address)."""
    plots = []
    for drawn in drawn_plots(request.app).of(name):
        data = png(drawn.path) if drawn.version == number else None
        if data is not None:
            source = f"data:image/png;base64,{base64.b64encode(data).decode()}"
            shown = ShownPlot(drawn.kind, source, drawn.path, drawn.statement, None, number)
            plots.append(shown)
    for plot in measured.plots:
        source = f"{model_url(name)}/plots/{quote(plot.run_id)}/{quote(plot.step)}"
        shown = ShownPlot(plot.kind, source, plot.path, plot.statement, plot.run_id, number)
        plots.append(shown)
    return plots


@dataclass(frozen=True)
class ShownEvaluation:
    """TO EVALUATE's metrics of the version shown: the run and step that measured them (its
    address on the run's page) and the metrics as text."""

    run_id: str
    step: str
    href: str
    metrics: list[tuple[str, str]]


def _evaluation(evaluation: Evaluation) -> ShownEvaluation:
    href = step_url(evaluation.run_id, evaluation.step)
    return ShownEvaluation(
        evaluation.run_id, evaluation.step, href, metrics_text(evaluation.metrics)
    )


def _missing(request: Request, name: str, version: int | str | None = None) -> Response:
    kind = "version" if str(version).isdigit() else "version or alias"
    what = f"model {name} has no {kind} {version}" if version else f"model {name} does not exist"
    hint = "SHOW MODELS lists the models; TO TRAIN ... INTO a model makes one"
    return _error_page(request, what, hint, 404)


def _error_page(request: Request, message: str, hint: str, status: int) -> Response:
    return page(
        request,
        "model_error.html",
        status_code=status,
        section="models",
        message=message,
        hint=hint,
    )


def _showing_errors(endpoint: Endpoint) -> Endpoint:
    """``endpoint``, whose errors (the datasource cannot be read) are a page saying so, without
    the datasource's password."""

    @functools.wraps(endpoint)
    async def shown(request: Request) -> Response:
        try:
            return await endpoint(request)
        except DatasourceBusy:  # a page that says so and loads again (pages.busy)
            raise
        except SqlmlError as error:
            scrub = scrubber(request.app.state.settings.datasource)
            return _error_page(request, scrub(error.message), scrub(error.hint or ""), 503)

    return shown


def _aliases_of(aliases: dict[str, int]) -> dict[int, str]:
    """Each aliased version's aliases, as one text: ``{3: "challenger, champion"}``."""
    named: dict[int, list[str]] = {}
    for alias, aliased in sorted(aliases.items()):
        named.setdefault(aliased, []).append(alias)
    return {aliased: ", ".join(names) for aliased, names in named.items()}


def _version_number(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _key_metrics(metrics: dict[str, float]) -> str:
    """A few metrics for the list of models: validation metrics first."""
    ranked = sorted(metrics, key=lambda key: not key.startswith("validation_"))
    return ", ".join(f"{key} {_number_text(metrics[key])}" for key in ranked[:SHOWN_METRICS])


def _number_text(value: float) -> str:
    return f"{value:.6g}"


def _shown(value: Any) -> str:
    """An attribute or property as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _features(metadata: dict[str, Any]) -> list[str]:
    """The feature columns' names as DESCRIBE MODEL shows them."""
    from sqlml.ir import FeatureColumn

    names = []
    for feature in metadata.get("features", []):
        try:
            names.append(FeatureColumn.from_dict(feature).name)
        except (KeyError, TypeError, ValueError, AttributeError):
            names.append("(unreadable feature column)")
    return names


Compared = tuple[str, str, str, bool]  # name, A's value, B's value, whether they differ


def _comparison(a: Version, b: Version) -> dict[str, list[Compared]]:
    """The rows comparing ``a`` and ``b`` by section: the estimator and properties, every
    attribute, every metric (absent: an empty cell)."""
    sections: dict[str, list[Compared]] = {"model": [], "attributes": [], "metrics": []}

    def add(section: str, key: str, left: Any, right: Any) -> None:
        shown = ["" if value is None else _shown(value) for value in (left, right)]
        sections[section].append((key, shown[0], shown[1], left != right))

    for key in ("estimator", "label", "rows", "trained_at", "statement"):
        add("model", key, a.metadata.get(key), b.metadata.get(key))
    for key in sorted({*a.attributes, *b.attributes}):
        add("attributes", key, a.attributes.get(key), b.attributes.get(key))
    for key in sorted({*a.metrics, *b.metrics}):
        left, right = a.metrics.get(key), b.metrics.get(key)
        shown = ["" if value is None else _number_text(value) for value in (left, right)]
        sections["metrics"].append((key, shown[0], shown[1], shown[0] != shown[1]))
    return sections


def _trials(version: Version) -> dict[str, Any] | None:
    """A searched version's trials: their table and a chart of the search's metric against
    each hyperparameter; None when the version was not searched."""
    trials = version.trials
    if not trials:
        return None
    search = version.metadata.get("search", {})
    metric, best = str(search.get("metric", "")), search.get("best_trial")
    names = sorted({key for t in trials for key in _values(t)})
    metrics = sorted({key for t in trials for key in _metrics(t)})
    rows = [
        {
            "number": t.get("trial"),
            "best": t.get("trial") == best,
            "values": [_shown(_values(t)[key]) if key in _values(t) else "" for key in names],
            "metrics": [_metric_text(_metrics(t).get(key)) for key in metrics],
            "status": str(t.get("status", "")),
            "error": str(t.get("error", "")),
        }
        for t in trials
    ]
    scored = f"validation_{metric}"
    charts = []
    for key in names:
        points = [
            Point(
                _values(t)[key],
                score,
                f"trial {t.get('trial')}: {key} = {_shown(_values(t)[key])}, "
                f"{scored} = {_number_text(score)}",
                t.get("trial") == best,
            )
            for t in trials
            if key in _values(t) and (score := number(_metrics(t).get(scored))) is not None
        ]
        if points:
            charts.append((key, scatter(points, key, scored)))
    return {
        "metric": scored,
        "goal": search.get("goal", ""),
        "algorithm": search.get("algorithm", ""),
        "table": search.get("trials_table", ""),
        "names": names,
        "metrics": metrics,
        "rows": rows,
        "charts": charts,
    }


def _values(trial: dict[str, Any]) -> dict[str, Any]:
    values = trial.get("values")
    return values if isinstance(values, dict) else {}


def _metrics(trial: dict[str, Any]) -> dict[str, Any]:
    metrics = trial.get("metrics")
    return metrics if isinstance(metrics, dict) else {}


def _metric_text(value: Any) -> str:
    found = number(value)
    return "" if found is None else _number_text(found)


ROUTES: list[BaseRoute] = [
    Route("/models", _showing_errors(models_page)),
    Route("/models/{name}", _showing_errors(model_page)),
    Route("/models/{name}/compare", _showing_errors(compare_page)),
    Route("/models/{name}/plots/{run_id}/{step}", _showing_errors(plot_file)),
]
