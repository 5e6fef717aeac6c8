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
WILDCARDS = ("0.0.0.0", "::", "")  # addresses that listen on every interface
SECURITY_HEADERS = (  # of every answer: no other site's page may frame one; no type sniffing
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
)


def create_app(settings: Settings) -> Starlette:
    """The application: runs, models and the editor, under a token unless ``settings`` has
    none (``sqlml ui --no-token``), answering to ``settings.hosts`` only when they are set; a
    busy datasource is a 503 that says so and is tried again (:func:`.pages.busy`)."""
    from sqlml.errors import DatasourceBusy
    from sqlml.ui import editor, models, runs
    from sqlml.ui.pages import busy_answer

    routes = [
        Route("/", lambda request: RedirectResponse("/runs")),
        *runs.ROUTES,
        *models.ROUTES,
        *editor.ROUTES,
        Mount("/static", StaticFiles(packages=[("sqlml.ui", "static")]), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(SameOrigin)]
    if settings.hosts:
        middleware.insert(1, Middleware(TrustedHostMiddleware, allowed_hosts=list(settings.hosts)))
    if settings.token:
        middleware.append(Middleware(TokenCheck, token=settings.token))
    app = Starlette(
        routes=routes, middleware=middleware, exception_handlers={DatasourceBusy: busy_answer}
    )
    app.state.settings = settings
    return app


class TokenCheck:
    """Refuses every request without the token: in the query (``?token=``, which also sets
    a cookie and redirects to the same page without it: a path, never an address made of the
    request's ``Host``), in the cookie, or as ``Authorization: Bearer TOKEN`` (the scheme in
    any case, RFC 7235)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app, self._token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and self._matches(given):
            response: Response = RedirectResponse(_without_token(request))
            response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
        elif self._matches(request.cookies.get(TOKEN_COOKIE, "")) or self._matches(
            _bearer(request.headers.get("authorization", ""))
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


def _without_token(request: Request) -> str:
    """The request's path and query without ``token``: where its redirect goes."""
    query = request.url.remove_query_params("token").query
    return request.url.path + (f"?{query}" if query else "")


def _bearer(authorization: str) -> str:
    """The credentials of an ``Authorization: Bearer ...`` header; empty for another."""
    scheme, _, credentials = authorization.strip().partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else ""


class SecurityHeaders:
    """Every response forbids framing by another site's page (clickjacking of Resume, Stop,
    Run) and a browser's guessing of its content's type (``nosniff``)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self._app(scope, receive, secured if scope["type"] == "http" else send)


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


def allowed_hosts(host: str) -> tuple[str, ...] | None:
    """The names a page listening on ``host`` answers to: loopback names and ``host`` (a
    web site whose name is made to point at this machine gets nothing: DNS rebinding);
    None, any, when it listens on every interface (the token alone guards it then)."""
    if host in WILDCARDS:
        return None
    return (*LOOPBACK_NAMES, f"[{host}]" if ":" in host else host)


def serve(
    datasource: str | None, host: str, port: int, token: str | None, file_access: bool = True
) -> int:
    """Serve the page on ``host``:``port`` until Ctrl-C (``token`` None: to anyone;
    ``file_access`` False: the editor's statements may not use this machine's files)."""
    import uvicorn

    from sqlml.local_files import default_run_dir

    hosts = allowed_hosts(host)
    settings = Settings(datasource, default_run_dir(), Path.cwd(), token, hosts, file_access)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
    return 0
