"""Editor pages of sqlml ui (routes listed in ROUTES): write statements, run them against the
datasource, see their results as tables, their errors where they are, and complete names as
the shell does.

``POST /editor/run`` checks and runs a program (:mod:`sqlml.ui.editor_runner`) and answers
an HTML fragment for ``<div id="result">`` (JSON ``{"ok", "html"}`` when asked in JSON, the
whole page for a plain form); ``POST /editor/cancel`` cancels the run going on; ``GET
/editor/progress`` answers its open stages' states (``training (m): 40/100 rounds ...``) as
JSON while it goes on; ``GET /editor/complete?text=&cursor=`` answers the shell's
completions as JSON. POSTs from another site are refused
(:class:`sqlml.ui.server.SameOrigin`), and no response holds the datasource's password
(:mod:`sqlml.datasources.redaction`).
"""

from __future__ import annotations

import base64
import threading
import time
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sqlml.datasources.redaction import scrubber
from sqlml.errors import DatasourceBusy, SqlmlError
from sqlml.local_files import internal_error
from sqlml.repl.catalog import Catalog
from sqlml.repl.session import format_error
from sqlml.ui.drawn_plots import drawn_plots
from sqlml.ui.editor_runner import Busy, EditorRun, EditorRunner
from sqlml.ui.pages import busy, datasource, page, templates

SOURCE = "<editor>"  # how the editor's text is named in error messages
SHOWN_ROWS = 500  # rows of a result shown in the page
MAX_COMPLETIONS = 50
CATALOG_SECONDS = 30.0  # how long the tables and models read for completion are kept
_STATE_LOCK = threading.Lock()


class _EditorState:
    """What the editor keeps between requests: its runner and the catalog for completion."""

    def __init__(self, request: Request) -> None:
        settings = request.app.state.settings
        self.runner = EditorRunner(settings.datasource, settings.base_dir, settings.file_access)
        self.scrub = scrubber(settings.datasource)
        self.catalog = Catalog()
        self.catalog_read = (-1, 0.0)  # the runner's generation and the time it was read at
        self.catalog_lock = threading.Lock()


def _state(request: Request) -> _EditorState:
    with _STATE_LOCK:
        state = getattr(request.app.state, "editor", None)
        if state is None:
            state = request.app.state.editor = _EditorState(request)
        return state


async def editor_page(request: Request) -> Response:
    return page(request, "editor.html", section="editor", sql="", result=None)


async def run(request: Request) -> Response:
    as_json = request.headers.get("content-type", "").startswith("application/json")
    if as_json:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"ok": False, "error": "the request is not JSON"}, status_code=400)
        given = body.get("sql") if isinstance(body, dict) else None
        text = given if isinstance(given, str) else ""
    else:
        text = parse_qs((await request.body()).decode("utf-8", "replace")).get("sql", [""])[0]
    state = _state(request)
    try:
        outcome = await run_in_threadpool(state.runner.run, text) if text.strip() else None
    except Busy:
        message = "another statement is running: wait for it, or cancel it"
        return JSONResponse({"ok": False, "busy": True, "error": message}, status_code=409)
    except DatasourceBusy as error:  # nothing ran: the page tries again (pages.busy)
        return busy(request, error)
    except SqlmlError as error:  # the datasource cannot be opened
        outcome = EditorRun(errors=[error])
    except Exception as error:  # a bug: one paragraph too, its traceback kept in a file
        outcome = EditorRun(errors=[internal_error(error, "the editor")])
    if outcome is not None:
        plots = drawn_plots(request.app)
        for result in outcome.results:
            if (plot := result.plot) is not None:
                plots.add(plot.model, plot.kind, plot.path, result.text, plot.version)
    context = _result_context(outcome, text, state.scrub)
    if not as_json:
        return page(request, "editor.html", section="editor", sql=text, **context)
    html = templates.get_template("editor_result.html").render(context)
    return JSONResponse({"ok": not context["errors"], "html": html})


async def cancel_run(request: Request) -> Response:
    return JSONResponse({"cancelled": _state(request).runner.cancel()})


async def progress(request: Request) -> Response:
    runner = _state(request).runner
    return JSONResponse({"running": runner.running(), "progress": runner.progress.lines()})


async def complete(request: Request) -> Response:
    text = request.query_params.get("text", "")
    cursor = request.query_params.get("cursor", "")
    at = int(cursor) if cursor.isdigit() else len(text)
    typing = request.query_params.get("typing") == "1"
    try:
        from sqlml.repl.completion import SqlmlCompleter
    except ModuleNotFoundError as error:  # prompt_toolkit: the repl extra
        missing = (error.name or "prompt_toolkit").split(".")[0]
        return JSONResponse([], headers={"X-Sqlml-Note": f"completion needs {missing}"})
    state = _state(request)
    await run_in_threadpool(_refresh_catalog, request, state)
    completer = SqlmlCompleter(state.catalog)
    return JSONResponse(_completions(completer, text, min(at, len(text)), typing))


def _refresh_catalog(request: Request, state: _EditorState) -> None:
    """Read the tables, columns and models again when a run may have changed them, or the
    last read is old (a datasource that cannot be read: as they were, tried again later)."""
    with state.catalog_lock:
        generation, read_at = state.catalog_read
        now = time.monotonic()
        if generation == state.runner.generation and now - read_at < CATALOG_SECONDS:
            return
        try:
            with datasource(request) as ds:
                state.catalog.refresh(ds)
        except SqlmlError:  # keywords and estimators are still offered
            pass
        state.catalog_read = (state.runner.generation, now)


def _completions(completer: Any, text: str, cursor: int, typing: bool) -> list[dict[str, Any]]:
    """The completer's completions at ``cursor``: each one's text, what it is, and how many
    characters before the cursor it replaces."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    event = CompleteEvent(text_inserted=typing, completion_requested=not typing)
    found = []
    for completion in completer.get_completions(Document(text, cursor), event):
        found.append(
            {
                "text": completion.text,
                "meta": completion.display_meta_text,
                "replace": -completion.start_position,
            }
        )
        if len(found) == MAX_COMPLETIONS:
            break
    return found


def _result_context(outcome: EditorRun | None, text: str, scrub: Any) -> dict[str, Any]:
    """What ``editor_result.html`` shows of a run: each statement's summary, rows (the first
    :data:`SHOWN_ROWS`) and plot, or the errors with their lines and carets."""
    if outcome is None:
        return {
            "result": None,
            "errors": [],
            "warnings": [],
            "statements": [],
            "cancelled": False,
        }
    errors = [_finding(e, text, scrub) for e in outcome.errors]
    warnings = [_finding(e, text, scrub) for e in outcome.warnings]
    statements = [
        {
            "text": r.text,
            "summary": scrub(r.summary or ""),
            "columns": r.result.columns if r.result is not None else None,
            "rows": [[_cell(v) for v in row] for row in r.result.rows[:SHOWN_ROWS]]
            if r.result is not None
            else [],
            "count": len(r.result.rows) if r.result is not None else 0,
            "plot": base64.b64encode(r.plot.data).decode() if r.plot else None,
        }
        for r in outcome.results
    ]
    return {
        "result": outcome,
        "errors": errors,
        "warnings": warnings,
        "statements": statements,
        "cancelled": outcome.cancelled,
        "shown_rows": SHOWN_ROWS,
        "seconds": f"{outcome.seconds:.3f}",
    }


def _finding(error: SqlmlError, text: str, scrub: Any) -> dict[str, Any]:
    """An error or a warning as the page shows it: where, what, the hint, and the line
    with a caret under it."""
    return {
        "where": f"line {error.line}, column {error.column}" if error.line is not None else "",
        "line": error.line,
        "column": error.column or 1,
        "message": scrub(error.message),
        "hint": scrub(error.hint or ""),
        "text": scrub(format_error(error, text, SOURCE)),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"({len(bytes(value))} bytes)"
    return str(value)


ROUTES: list[BaseRoute] = [
    Route("/editor", editor_page),
    Route("/editor/run", run, methods=["POST"]),
    Route("/editor/cancel", cancel_run, methods=["POST"]),
    Route("/editor/progress", progress),
    Route("/editor/complete", complete),
]
