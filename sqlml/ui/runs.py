"""Runs pages of sqlml ui (routes listed in ROUTES): the list of runs, a run's page with its
DAG (updated live by ``static/runs.js`` polling its state), a step's details and log, and
resuming or stopping a run."""

from __future__ import annotations

from functools import lru_cache

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from sqlml.ui import argo_runs, launch
from sqlml.ui.dag import NODE_HEIGHT, NODE_WIDTH, Layout, layout
from sqlml.ui.pages import page
from sqlml.ui.paging import PAGE_ROWS, page_number, page_of
from sqlml.ui.run_views import (
    STATES,
    RunView,
    failed_attempts,
    list_runs,
    read_run,
    resumed_by,
    resumed_chain,
    run_output,
    step_log,
)

LABEL_CHARACTERS = 22  # of a step's name drawn in its node (the whole name is in its title)
RUNS_SHOWN = PAGE_ROWS  # runs a page of the list shows


def runs_page(request: Request) -> Response:
    text, state = request.query_params.get("q", ""), request.query_params.get("state", "")
    argo, argo_note = argo_runs.listed(request.app.state.settings)
    found = list_runs(request.app.state.settings, text, state, also=argo)
    number = page_number(request.query_params.get("page")) or 1
    shown = page_of(found.runs, number, "/runs", {"q": text, "state": state}, RUNS_SHOWN)
    return page(
        request,
        "runs.html",
        section="runs",
        runs=shown.rows,
        shown=shown,
        note=found.note,
        argo_note=argo_note,
        q=text,
        state=state,
        states=STATES,
    )


def run_page(request: Request) -> Response:
    settings = request.app.state.settings
    run = _run(request)
    if run is None:
        return _unknown_run(request)
    drawing = _layout(tuple((step.name, tuple(step.after)) for step in run.steps))
    steps = {step.name: step for step in run.steps}
    return page(
        request,
        "run.html",
        section="runs",
        run=run,
        steps=steps,
        drawing=drawing,
        node_width=NODE_WIDTH,
        node_height=NODE_HEIGHT,
        label_characters=LABEL_CHARACTERS,
        chain=resumed_chain(settings, run),
        resumed_by=resumed_by(settings, run.run_id),
        output=run_output(settings, run.run_id),
    )


def run_state(request: Request) -> Response:
    """The run's state and each step's state and hover text, for the live page."""
    run = _run(request)
    if run is None:
        return JSONResponse(
            {"error": f"there is no run {request.path_params['run_id']}"}, status_code=404
        )
    return JSONResponse(_state(run))


def step_details(request: Request) -> Response:
    """What the step panel shows but the log: statement, times, error and hint, attempts."""
    run = _run(request)
    step = run.step(request.path_params["step"]) if run is not None else None
    if run is None or step is None:
        return JSONResponse({"error": "there is no such step in this run"}, status_code=404)
    log = step_log(request.app.state.settings, run.run_id, step.name) or ""
    return JSONResponse({**step.details(), "failed_attempts": failed_attempts(log)})


def step_log_text(request: Request) -> Response:
    run = _run(request)
    step = request.path_params["step"]
    if run is None or run.step(step) is None:
        return PlainTextResponse("there is no such step in this run\n", status_code=404)
    text = step_log(request.app.state.settings, run.run_id, step)
    if text is None:
        return PlainTextResponse(
            f"step {step} has no log (it did not start in this run)\n", status_code=404
        )
    return PlainTextResponse(text)


def resume_run(request: Request) -> Response:
    """Resume the run; answers the new run's id and page."""
    run = _run(request)
    if run is None:
        return JSONResponse(
            {"error": f"there is no run {request.path_params['run_id']}"}, status_code=404
        )
    try:
        new = launch.resume(request.app.state.settings, run)
    except launch.LaunchError as error:
        return JSONResponse({"error": error.message, "hint": error.hint}, status_code=409)
    return JSONResponse({"run": new, "url": f"/runs/{new}"})


def stop_run(request: Request) -> Response:
    run = _run(request)
    if run is None:
        return JSONResponse(
            {"error": f"there is no run {request.path_params['run_id']}"}, status_code=404
        )
    try:
        launch.stop(run)
    except launch.LaunchError as error:
        return JSONResponse({"error": error.message, "hint": error.hint}, status_code=409)
    return JSONResponse({"run": run.run_id, "stopping": True})


@lru_cache(maxsize=16)
def _layout(steps: tuple[tuple[str, tuple[str, ...]], ...]) -> Layout:
    """The drawing of a run's DAG, kept for the next loads of its page (a DAG never changes
    while its run goes on)."""
    return layout(steps)


def _run(request: Request) -> RunView | None:
    return read_run(request.app.state.settings, request.path_params["run_id"])


def _state(run: RunView) -> dict[str, object]:
    return {
        "state": run.state,
        "duration": run.duration,
        "resumable": run.resumable,
        "stoppable": run.stoppable,
        "steps": {step.name: [step.state, step.title] for step in run.steps},
    }


def _unknown_run(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    return page(request, "run_missing.html", status_code=404, section="runs", run_id=run_id)


ROUTES: list[BaseRoute] = [  # a run id that names an Argo run's record: argo_runs answers
    Route("/runs", runs_page),
    Route("/runs/{run_id}", argo_runs.either(run_page, argo_runs.run_page)),
    Route("/runs/{run_id}/state", argo_runs.either(run_state, argo_runs.run_state)),
    Route("/runs/{run_id}/steps/{step}", argo_runs.either(step_details, argo_runs.step_details)),
    Route(
        "/runs/{run_id}/steps/{step}/log", argo_runs.either(step_log_text, argo_runs.step_log_text)
    ),
    Route(
        "/runs/{run_id}/resume",
        argo_runs.either(resume_run, argo_runs.resume_run),
        methods=["POST"],
    ),
    Route("/runs/{run_id}/stop", argo_runs.either(stop_run, argo_runs.stop_run), methods=["POST"]),
]
