"""What every page shares: its HTML from a template, and the datasource it reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from sqlml.backends import backends
from sqlml.datasources import Datasource, connect


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
