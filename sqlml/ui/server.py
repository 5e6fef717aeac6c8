"""The web application of ``sqlml ui`` (Starlette) and its server (uvicorn)."""

from __future__ import annotations

import hmac
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from sqlml.ui.settings import Settings

TOKEN_COOKIE = "sqlml_ui_token"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
NO_FRAMING = (  # the headers of every answer: no other site's page may frame one
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
)


def create_app(settings: Settings) -> Starlette:
    """The application: runs, models and the editor, under a token when one is set."""
    from sqlml.ui import editor, models, runs

    routes = [
        Route("/", lambda request: RedirectResponse("/runs")),
        *runs.ROUTES,
        *models.ROUTES,
        *editor.ROUTES,
        Mount("/static", StaticFiles(packages=[("sqlml.ui", "static")]), name="static"),
    ]
    middleware = [Middleware(NoFraming), Middleware(SameOrigin)]
    if settings.hosts:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=list(settings.hosts)))
    if settings.token:
        middleware.append(Middleware(TokenCheck, token=settings.token))
    app = Starlette(routes=routes, middleware=middleware)
    app.state.settings = settings
    return app


class TokenCheck:
    """Refuses every request without the token: in the query (``?token=``, which also sets
    a cookie and redirects to the same page without it), in the cookie, or as a bearer."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app, self._token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and self._matches(given):
            response: Response = RedirectResponse(request.url.remove_query_params("token"))
            response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
        elif self._matches(request.cookies.get(TOKEN_COOKIE, "")) or self._matches(
            request.headers.get("authorization", "").removeprefix("Bearer ")
        ):
            await self._app(scope, receive, send)
            return
        else:
            response = PlainTextResponse(
                "sqlml ui: this page needs its token: open the address sqlml ui printed "
                "(…?token=…)",
                status_code=403,
            )
        await response(scope, receive, send)

    def _matches(self, given: str) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self._token.encode())


class NoFraming:
    """Every response forbids framing by another site's page (clickjacking of Resume, Stop,
    Run)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def unframed(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *NO_FRAMING]
            await send(message)

        await self._app(scope, receive, unframed if scope["type"] == "http" else send)


class SameOrigin:
    """Refuses a request that changes something (a POST: run, resume, stop) sent by a page of
    another site: its ``Origin`` (else ``Referer``) must name the host it was sent to.
    Browsers send one of them with such requests; a program that sends neither is no
    browser, and so no other site's page."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            request = Request(scope)
            sender = request.headers.get("origin") or request.headers.get("referer")
            if sender is not None and urlsplit(sender).netloc != request.headers.get("host"):
                response = PlainTextResponse(
                    "sqlml ui: refused a request sent by a page of another site "
                    f"({sender}): make it from sqlml ui's own page",
                    status_code=403,
                )
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


def serve(datasource: str | None, host: str, port: int, token: str | None) -> int:
    """Serve the page on ``host``:``port`` until Ctrl-C."""
    import uvicorn

    from sqlml.local_files import default_run_dir

    hosts = None if token else (*LOOPBACK_NAMES, f"[{host}]" if ":" in host else host)
    settings = Settings(datasource, default_run_dir(), Path.cwd(), token, hosts)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
    return 0
