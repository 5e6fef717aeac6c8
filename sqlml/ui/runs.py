"""Runs pages of sqlml ui (routes listed in ROUTES): the list of runs, a run's page with its
DAG (updated live by ``static/runs.js`` polling its state), a step's details and log, and
resuming or stopping a run.

Every backend's runs are listed; a run's pages are its backend's (the one whose views own
its id, else the default backend's), answered from its :class:`~sqlml.backends.runs.RunViews`.
"""

from __future__ import annotations

from functools import lru_cache

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from sqlml.backends import DEFAULT, backend, backends
from sqlml.backends.runs import STATES, RunView, RunViews, ViewError
from sqlml.ui.dag import NODE_HEIGHT, NODE_WIDTH, Layout, layout
from sqlml.ui.model_lineage import with_version_link
from sqlml.ui.pages import page
from sqlml.ui.paging import PAGE_ROWS, page_number, page_of

LABEL_CHARACTERS = 22  # of a step's name drawn in its node (the whole name is in its title)
RUNS_SHOWN = PAGE_ROWS  # runs a page of the list shows


def runs_page(request: Request) -> Response:
    settings = request.app.state.settings
    text, state = request.query_params.get("q", ""), request.query_params.get("state", "")
    runs: list[RunView] = []
    note, notes = None, []  # the default backend's note; the others', each with its id
    for name, views in all_views():
        found, said = views.runs(settings)
        runs += found
        if name == DEFAULT:
            note = said
        elif said:
            notes.append((f"{name}-note", said))
    number = page_number(request.query_params.get("page")) or 1
    chosen = _chosen(runs, text, state)
    shown = page_of(chosen, number, "/runs", {"q": text, "state": state}, RUNS_SHOWN)
    return page(
        request,
        "runs.html",
        section="runs",
        runs=shown.rows,
        shown=shown,
        note=note,
        notes=notes,
        q=text,
        state=state,
        states=STATES,
    )


def run_page(request: Request) -> Response:
    settings = request.app.state.settings
    views = _views(request)
    run = views.run(settings, request.path_params["run_id"]) if views is not None else None
    if views is None or run is None:
        return _unknown_run(request)
    drawing = _layout(tuple((step.name, tuple(step.after)) for step in run.steps))
    steps = {step.name: step for step in run.steps}
    return page(
        request,
        views.page,
        section="runs",
        run=run,
        steps=steps,
        drawing=drawing,
        node_width=NODE_WIDTH,
        node_height=NODE_HEIGHT,
        label_characters=LABEL_CHARACTERS,
        **views.page_context(settings, run),
    )


def run_state(request: Request) -> Response:
    """The run's state and each step's state and hover text, for the live page."""
    views = _views(request)
    run = views.run(request.app.state.settings, request.path_params["run_id"]) if views else None
    if views is None or run is None:
        return JSONResponse(
            {"error": f"there is no run {request.path_params['run_id']}"}, status_code=404
        )
    try:
        return JSONResponse(views.state(run))
    except ViewError as error:
        return JSONResponse(error.payload(), status_code=error.status)


def step_details(request: Request) -> Response:
    """What the step panel shows but the log: statement, times, error and hint, attempts."""
    settings = request.app.state.settings
    views = _views(request)
    run = views.run(settings, request.path_params["run_id"]) if views else None
    step = run.step(request.path_params["step"]) if run is not None else None
    if views is None or run is None or step is None:
        return JSONResponse({"error": "there is no such step in this run"}, status_code=404)
    return JSONResponse(with_version_link(views.step_details(settings, run, step)))


def step_log_text(request: Request) -> Response:
    views = _views(request)
    if views is None:
        return PlainTextResponse("there is no such step in this run\n", status_code=404)
    try:
        text = views.log(
            request.app.state.settings, request.path_params["run_id"], request.path_params["step"]
        )
    except ViewError as error:
        return PlainTextResponse(f"{error.error}\n", status_code=error.status)
    return PlainTextResponse(text)


def resume_run(request: Request) -> Response:
    """Resume the run; answers the new run's id and page."""
    run_id = request.path_params["run_id"]
    try:
        new = _acting(request).resume(request.app.state.settings, run_id)
    except ViewError as error:
        return JSONResponse(error.payload(), status_code=error.status)
    return JSONResponse({"run": new, "url": f"/runs/{new}"})


def stop_run(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    try:
        stopped = _acting(request).stop(request.app.state.settings, run_id)
    except ViewError as error:
        return JSONResponse(error.payload(), status_code=error.status)
    return JSONResponse({"run": stopped, "stopping": True})


def all_views() -> list[tuple[str, RunViews]]:
    """Each backend's run views by its name, the default backend's first."""
    found = [(name, known.run_views()) for name, known in backends().items()]
    ordered = sorted(found, key=lambda pair: pair[0] != DEFAULT)
    return [(name, views) for name, views in ordered if views is not None]


def _views(request: Request) -> RunViews | None:
    """The views of the backend that owns the request's run id, else the default one's."""
    settings, run_id = request.app.state.settings, request.path_params["run_id"]
    owner = (v for name, v in all_views() if name != DEFAULT and v.owns(settings, run_id))
    return next(owner, None) or backend(DEFAULT).run_views()


def _acting(request: Request) -> RunViews:
    """The views to resume or stop the request's run (none: it is not known)."""
    views = _views(request)
    if views is None:
        raise ViewError(404, f"there is no run {request.path_params['run_id']}")
    return views


def _chosen(runs: list[RunView], text: str, state: str) -> list[RunView]:
    """The runs whose program or id holds ``text`` and whose state is ``state`` (if
    given), newest first."""
    text = text.strip().lower()
    chosen = [
        run
        for run in runs
        if (
            not text
            or text in f"{run.program} {run.source or ''} {run.run_id} {run.workflow}".lower()
        )
        and (not state or run.state == state)
    ]
    chosen.sort(key=lambda run: (run.started_at or 0.0, run.run_id), reverse=True)
    return chosen


@lru_cache(maxsize=16)
def _layout(steps: tuple[tuple[str, tuple[str, ...]], ...]) -> Layout:
    """The drawing of a run's DAG, kept for the next loads of its page (a DAG never changes
    while its run goes on)."""
    return layout(steps)


def _unknown_run(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    return page(request, "run_missing.html", status_code=404, section="runs", run_id=run_id)


ROUTES: list[BaseRoute] = [
    Route("/runs", runs_page),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/state", run_state),
    Route("/runs/{run_id}/steps/{step}", step_details),
    Route("/runs/{run_id}/steps/{step}/log", step_log_text),
    Route("/runs/{run_id}/resume", resume_run, methods=["POST"]),
    Route("/runs/{run_id}/stop", stop_run, methods=["POST"]),
]
