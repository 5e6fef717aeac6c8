"""What every page shares: its HTML from a template, and the datasource it reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.templating import Jinja2Templates

from sqlml.backends import backends
from sqlml.datasources import Datasource, connect
from sqlml.datasources.redaction import scrubber
from sqlml.errors import DatasourceBusy

RETRY_SECONDS = 5  # how soon a page the busy datasource kept from answering is asked again


def _folders() -> list[Path]:
    """The page's templates, then those of each backend's run views."""
    found = [Path(__file__).parent / "templates"]
    for known in backends().values():
        views = known.run_views()
        if views is not None and views.templates is not None:
            found.append(views.templates)
    return found


templates = Jinja2Templates(directory=_folders())


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """``template`` (which extends ``base.html``) rendered with ``context``."""
    return templates.TemplateResponse(request, template, context, status_code=status_code)


def busy(request: Request, error: DatasourceBusy) -> Response:
    """The answer when the datasource is busy (another process holds it: a DuckDB file a run
    has open): 503 and ``Retry-After``, as a page that says so and (a GET) loads itself again
    after :data:`RETRY_SECONDS`, or as JSON ``{"error", "hint", "busy", "retry"}`` to a
    script (the editor's runs the statement again then: nothing of it ran)."""
    scrub = scrubber(request.app.state.settings.datasource)
    message, hint = scrub(error.message), scrub(error.hint or "")
    headers = {"Retry-After": str(RETRY_SECONDS)}
    wanted = request.headers.get("accept", "") + request.headers.get("content-type", "")
    if "application/json" in wanted:
        answer = {"error": message, "hint": hint, "busy": True, "retry": RETRY_SECONDS}
        return JSONResponse(answer, status_code=503, headers=headers)
    again = None  # a read is asked again; a statement is not run again unasked
    if request.method == "GET":
        again = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    shown = page(
        request, "busy.html", 503, message=message, hint=hint, retry=RETRY_SECONDS, again=again
    )
    shown.headers.update(headers)
    return shown


async def busy_answer(request: Request, error: Exception) -> Response:
    """:func:`busy` for a :class:`DatasourceBusy` a page's endpoint raised."""
    assert isinstance(error, DatasourceBusy)
    return busy(request, error)


@contextmanager
def datasource(request: Request) -> Iterator[Datasource]:
    """A connection to the page's datasource for one request, closed after it (an embedded
    DuckDB file is then free for the runs that write to it)."""
    settings = request.app.state.settings
    connection = connect(settings.datasource, settings.base_dir)
    try:
        yield connection
    finally:
        connection.close()
