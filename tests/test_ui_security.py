"""sqlml ui's security: it listens on loopback unless told otherwise, always with a token
(refused without it, a cookie once given, a bearer in any case) unless told ``--no-token``
on loopback, answering to its own host names only; no secret of its command line stays in
the process list; the datasource's password appears in no page and no response, error
responses included; a POST from another site's page changes nothing; the editor refuses
what ``sqlml check`` refuses, with the same message, and runs only declared TO RUN modules.
"""

from __future__ import annotations

import html
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

import pytest
from conftest import datasource_url, import_or_skip, iris_columns
from ui_browser import Demo, make_demo, run_id, sqlml

from sqlml.backends.local.run_file import read_run_file
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

import_or_skip("starlette")  # the ui extra
import_or_skip("httpx2")  # the test extra: starlette's TestClient
import httpx2 as httpx  # noqa: E402
from httpx2 import Response  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from sqlml.ui import server  # noqa: E402
from sqlml.ui.server import TOKEN_COOKIE, Settings, create_app  # noqa: E402

PASSWORD = "S3ntinel-pw"
USER = "sqlmlui"
OTHER_SITE = "https://elsewhere.example"
SAME_SITE = "http://testserver"  # TestClient's address
MAX_PAGES = 150  # the crawl's bound


# -- where it listens, and the token -------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> set[str]:
    """The IPv4 and IPv6 addresses a socket of this machine listens on at ``port`` (as
    /proc/net/tcp* write them: hexadecimal, in the kernel's byte order)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


@pytest.fixture
def sqlml_ui(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[str], str]]]:
    """Start ``sqlml ui ARGUMENTS`` (a process of its own); stopped at the test's end. It
    returns the process and the address line it printed."""
    started: list[subprocess.Popen[str]] = []

    def start(*arguments: str) -> tuple[subprocess.Popen[str], str]:
        datasource = (
            [] if "--datasource" in arguments else ["--datasource", f"duckdb:///{tmp_path}/ui.db"]
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "sqlml", "ui", *datasource, *arguments],
            cwd=tmp_path, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        started.append(process)
        line = process.stderr.readline()
        assert line.startswith("sqlml ui: http://"), line
        return process, line.strip()

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def answered(url: str, **options) -> Response:
    """``url``'s response, once the server has started listening (300 s at most, a
    deadlock guard)."""
    deadline = time.monotonic() + 300
    while True:
        try:
            return httpx.get(url, timeout=10, **options)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


ADDRESS = re.compile(r"sqlml ui: (http://\S+/)\?token=([\w-]+)")


def printed_token(address: str) -> tuple[str, str]:
    """The page's address and its token, from the line ``sqlml ui`` printed."""
    found = ADDRESS.fullmatch(address)
    assert found, f"sqlml ui printed no token: {address}"
    return found.group(1), found.group(2)


def test_sqlml_ui_listens_on_loopback_only_by_default(sqlml_ui):
    port = free_port()
    _, line = sqlml_ui("--port", str(port))
    address, token = printed_token(line)
    assert address == f"http://127.0.0.1:{port}/" and len(token) >= 24
    assert answered(f"http://127.0.0.1:{port}/runs").status_code == 403  # no token
    bearer = {"authorization": f"Bearer {token}"}
    assert answered(f"http://127.0.0.1:{port}/runs", headers=bearer).status_code == 200
    assert listening(port) == {"0100007F"}  # 127.0.0.1, nothing else


@pytest.mark.parametrize("host", ["localhost", "::1"])
def test_sqlml_ui_answers_at_the_address_it_prints_on_each_loopback_name(sqlml_ui, host):
    port = free_port()
    _, line = sqlml_ui("--host", host, "--port", str(port))
    shown = {"localhost": "localhost", "::1": "[::1]"}[host]
    address, token = printed_token(line)
    assert address == f"http://{shown}:{port}/"
    entered = answered(f"{address}runs?token={token}")
    assert entered.is_redirect and entered.headers["location"] == "/runs"
    with httpx.Client(cookies={TOKEN_COOKIE: token}) as browser:
        assert browser.get(f"{address}runs").status_code == 200


def test_a_loopback_page_answers_to_loopback_names_only(sqlml_ui):
    """A web site whose name is made to point at 127.0.0.1 (DNS rebinding) gets nothing,
    even with the token."""
    port = free_port()
    _, token = printed_token(sqlml_ui("--port", str(port))[1])
    rebound = answered(
        f"http://127.0.0.1:{port}/runs",
        headers={"host": f"rebound.example:{port}", "authorization": f"Bearer {token}"},
    )
    assert rebound.status_code == 400


SERVED = ("ds", "host", "port", "token", "file_access")  # serve's arguments


@pytest.mark.parametrize(
    ("options", "token"),
    [
        ([], "generated"),
        (["--host", "localhost"], "generated"),
        (["--host", "::1"], "generated"),
        (["--host", "0.0.0.0"], "generated"),
        (["--host", "192.168.1.20", "--token", "given-token"], "given-token"),
        (["--no-token"], None),
        (["--host", "::1", "--no-token"], None),
    ],
)
def test_sqlml_ui_has_a_token_unless_told_on_loopback(options, token, monkeypatch, capsys):
    served = {}
    monkeypatch.delenv("SQLML_UI_TOKEN", raising=False)
    monkeypatch.setattr(
        server,
        "serve",
        lambda *args: served.update(zip(SERVED, args, strict=True)) or 0,
    )
    assert main(["ui", *options]) == 0
    printed = capsys.readouterr().err
    host = options[1] if options[:1] == ["--host"] else "127.0.0.1"
    assert served["host"] == host and served["file_access"] is True
    if token is None:
        assert served["token"] is None and "?token" not in printed
        assert "warning: no token: every user of this machine" in printed
    else:
        assert served["token"] == token or (token == "generated" and len(served["token"]) >= 24)
        assert f"?token={served['token']}" in printed


def test_no_token_is_refused_off_loopback(monkeypatch, capsys):
    monkeypatch.setattr(server, "serve", lambda *args: pytest.fail("served without a token"))
    assert main(["ui", "--host", "0.0.0.0", "--no-token"]) == 1
    assert "anyone there would run statements as you" in capsys.readouterr().err


def test_a_token_from_the_environment_is_used(monkeypatch, capsys):
    served = {}
    monkeypatch.setenv("SQLML_UI_TOKEN", "from-the-environment")
    monkeypatch.setattr(server, "serve", lambda *args: served.update(token=args[3]) or 0)
    assert main(["ui", "--host", "0.0.0.0"]) == 0
    assert served["token"] == "from-the-environment"
    assert "SQLML_UI_TOKEN" not in os.environ  # no run the page resumes, no program, gets it


def test_no_secret_of_the_command_line_stays_in_the_process_list(sqlml_ui, tmp_path):
    """``ps`` (``/proc/PID/cmdline``) shows neither the datasource's password nor the
    token given on the command line: they are moved into the environment, which only the
    user who started the page reads."""
    port = free_port()
    url = f"mysql://someone:{PASSWORD}@127.0.0.1:{free_port()}/db"
    process, line = sqlml_ui("--datasource", url, "--token", "cli-token", "--port", str(port))
    assert printed_token(line) == (f"http://127.0.0.1:{port}/", "cli-token")
    bearer = {"authorization": "Bearer cli-token"}
    assert answered(f"http://127.0.0.1:{port}/runs", headers=bearer).status_code == 200
    arguments = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode()
    assert "ui" in arguments.split("\0") and str(port) in arguments
    assert PASSWORD not in arguments and "cli-token" not in arguments, arguments
    environment = Path(f"/proc/{process.pid}/environ").read_bytes().split(b"\0")
    assert f"SQLML_DATASOURCE={url}".encode() in environment  # for the runs it resumes


def test_every_request_without_the_token_is_refused(sqlml_ui):
    port = free_port()
    _, address = sqlml_ui("--host", "0.0.0.0", "--port", str(port))
    token = re.fullmatch(r"sqlml ui: http://0\.0\.0\.0:\d+/\?token=([\w-]+)", address).group(1)
    home = f"http://127.0.0.1:{port}"
    for path in ("/", "/runs", "/runs/any", "/models", "/models/any", "/editor",
                 "/static/style.css", "/missing"):  # fmt: skip
        refused = answered(home + path)
        assert refused.status_code == 403, path
        assert "token" in refused.text and token not in refused.text
        assert answered(home + path, params={"token": "wrong"}).status_code == 403
        assert answered(home + path, cookies={TOKEN_COOKIE: "wrong"}).status_code == 403
    assert httpx.post(f"{home}/editor/run", json={"sql": "SELECT 1;"}).status_code == 403

    given = answered(f"{home}/runs?token={token}&state=failed")
    assert given.is_redirect
    assert given.headers["location"] in (f"{home}/runs?state=failed", "/runs?state=failed")
    cookie = given.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={token};")
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    with httpx.Client(base_url=home, cookies={TOKEN_COOKIE: token}) as browser:
        assert browser.get("/runs?state=failed").status_code == 200
        assert browser.get("/static/style.css").status_code == 200
    bearer = {"authorization": f"Bearer {token}"}
    assert httpx.get(f"{home}/models", headers=bearer).status_code == 200


def test_the_token_is_checked_on_every_route():
    """Each route of the application (every page helper's) is behind the token."""
    app = create_app(Settings(None, Path("."), Path("."), token="the-token"))
    client = TestClient(app, follow_redirects=False)
    paths = {re.sub(r"\{[^}]+\}", "x", route.path) for route in app.routes}
    assert {"/runs", "/models", "/editor", "/static"} <= paths
    for path in paths:
        for method in ("GET", "POST"):
            assert client.request(method, path).status_code == 403, (method, path)


def token_client(hosts: tuple[str, ...] | None = ("127.0.0.1", "localhost", "[::1]")) -> TestClient:
    """A page served on 127.0.0.1 with the token ``the-token``, as ``sqlml ui`` serves it."""
    settings = Settings(None, Path("."), Path("."), token="the-token", hosts=hosts)
    return TestClient(
        create_app(settings), base_url="http://127.0.0.1:8765", follow_redirects=False
    )


def test_the_token_redirect_is_a_path_never_the_requests_host():
    entered = token_client().get("/runs?state=failed&token=the-token&q=x")
    assert entered.status_code == 307
    assert entered.headers["location"] == "/runs?state=failed&q=x"
    anywhere = token_client(hosts=None)  # listening on every interface: any name
    forged = anywhere.get("/runs?token=the-token", headers={"host": "attacker.example"})
    assert forged.headers["location"] == "/runs"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_a_bearer_token_is_taken_in_any_case(scheme):
    assert (
        token_client().get("/runs", headers={"authorization": f"{scheme} the-token"}).status_code
        == 200
    )


@pytest.mark.parametrize(
    "authorization", ["Basic the-token", "the-token", "Bearer", "Bearer other"]
)
def test_other_authorizations_are_refused(authorization):
    assert token_client().get("/runs", headers={"authorization": authorization}).status_code == 403


def test_a_page_with_a_token_answers_to_its_own_host_names_only():
    """The Host check stays with the token (DNS rebinding): a valid token under another
    name gets nothing."""
    client = token_client()
    bearer = {"authorization": "Bearer the-token"}
    for name in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
        assert client.get("/runs", headers={**bearer, "host": name}).status_code == 200, name
    assert client.get("/runs", headers={**bearer, "host": "rebound.example"}).status_code == 400
    assert server.allowed_hosts("192.168.1.20") == (
        "127.0.0.1",
        "localhost",
        "[::1]",
        "192.168.1.20",
    )
    assert server.allowed_hosts("::1")[-1] == "[::1]"
    assert server.allowed_hosts("0.0.0.0") is None and server.allowed_hosts("::") is None


def test_every_response_forbids_type_sniffing():
    client = token_client()
    bearer = {"authorization": "Bearer the-token"}
    answers = [
        client.get("/runs"),  # refused: no token
        client.get("/runs?token=the-token"),  # the redirect
        client.get("/runs", headers=bearer),
        client.get("/static/style.css", headers=bearer),
        client.get("/no-such-page", headers=bearer),
        client.get("/runs", headers={**bearer, "host": "rebound.example"}),
    ]
    for answer in answers:
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.request.url


# -- the datasource's password -------------------------------------------------------


def mysql_with_password(folder: Path) -> str:
    """The test server's database through a user whose password is the sentinel."""
    root = datasource_url("mysql", folder)
    parts = urlsplit(root)
    ds = connect(root)
    try:
        database = ds.quote([parts.path.lstrip("/")])  # SQLML_TEST_MYSQL's, not always test
        for host in ("%", "localhost", "127.0.0.1"):
            ds.execute(f"CREATE USER IF NOT EXISTS '{USER}'@'{host}' IDENTIFIED BY '{PASSWORD}'")
            ds.execute(f"GRANT ALL PRIVILEGES ON {database}.* TO '{USER}'@'{host}'")
    finally:
        ds.close()
    return f"mysql://{USER}:{PASSWORD}@{parts.hostname}:{parts.port}{parts.path}"


def postgresql_with_password(folder: Path) -> str:
    """The test server's database, the sentinel given as the password (trust ignores it)."""
    parts = urlsplit(datasource_url("postgresql", folder))
    return f"postgresql://{parts.username}:{PASSWORD}@{parts.hostname}:{parts.port}{parts.path}"


def program(prefix: str) -> str:
    """A model, its evaluation's plot, then a step failing on a missing table."""
    measures = "sepal_length, sepal_width, petal_length, petal_width"
    return (
        f"SELECT {measures}, class FROM {prefix}_iris TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3 LABEL class INTO {prefix}_m;\n"
        f"SELECT * FROM {prefix}_iris TO EVALUATE {prefix}_m "
        f"WITH evaluate.plot = 'evaluation.png' LABEL class INTO {prefix}_eval;\n"
        f"CREATE TABLE {prefix}_joined AS SELECT e.* FROM {prefix}_eval AS e "
        f"CROSS JOIN {prefix}_missing AS m;\n"
    )


@pytest.fixture(params=["mysql", "postgresql"])
def server_with_password(request, tmp_path, unique_name) -> Iterator[tuple[str, str, str]]:
    """A database server's URL holding the sentinel password, with a failed run of the
    program and its model; yields the URL, the run id and the names' prefix."""
    url = (mysql_with_password if request.param == "mysql" else postgresql_with_password)(tmp_path)
    ds = connect(url)
    ds.write_table([f"{unique_name}_iris"], iris_columns())
    ds.close()
    (tmp_path / "program.sql").write_text(program(unique_name))
    env = {"SQLML_RUN_DIR": str(tmp_path / "runs")}
    done = sqlml("run", "program.sql", "--datasource", url, folder=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    yield url, run_id(done.stderr), unique_name
    ds = connect(url)
    for table in ("iris", "eval", "joined"):
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}_{table}")
    ModelStore(ds).drop(f"{unique_name}_m")
    ds.close()


def text_of(response) -> str:
    """Everything a response says: its headers, and its body as sent and unescaped."""
    headers = "\n".join(f"{key}: {value}" for key, value in response.headers.items())
    return f"{headers}\n{response.text}\n{html.unescape(response.text)}"


def links(page: str, base: str) -> set[str]:
    """The same-site addresses a page refers to (links, images, scripts, GET forms)."""
    found = re.findall(r'(?:href|src|action)="([^"#]+)', page)
    return {urljoin(base, html.unescape(link)) for link in found if not link.startswith("http")}


def crawl(client: TestClient, start: list[str], ours: tuple[str, ...]) -> dict[str, Response]:
    """Every page reachable from ``start`` by its links, each address with its response;
    links to runs and models are followed when they are this test's (``ours`` names them)."""
    seen: dict[str, Response] = {}
    queue = list(start)
    while queue and len(seen) < MAX_PAGES:
        address = queue.pop(0)
        if address in seen:
            continue
        seen[address] = response = client.get(address)
        for link in links(response.text, address):
            parts = urlsplit(link).path.split("/")
            others = len(parts) > 2 and parts[1] in ("runs", "models")
            if not others or any(name in parts[2] for name in ours):
                queue.append(urlsplit(link)._replace(scheme="", netloc="").geturl())
    return seen


def editor_answers(client: TestClient, statements: list[str]) -> dict[str, Response]:
    return {
        f"POST /editor/run {sql}": client.post(
            "/editor/run", json={"sql": sql}, headers={"origin": SAME_SITE}
        )
        for sql in statements
    }


def resumed(client: TestClient, failed: str) -> tuple[Response, str]:
    """Resume ``failed`` from the page: the answer, and the new run's id once it has ended."""
    answer = client.post(f"/runs/{failed}/resume", headers={"origin": SAME_SITE})
    assert answer.status_code == 200, answer.text
    new = answer.json()["run"]
    deadline = time.monotonic() + 300  # a deadlock guard
    while client.get(f"/runs/{new}/state").json()["state"] in ("pending", "running"):
        assert time.monotonic() < deadline, f"the resumed run {new} did not end"
        time.sleep(0.5)
    return answer, new


def assert_secret_kept(pages: dict[str, Response], url: str) -> None:
    """No page shows the password (as written, or as a URL or form would encode it) and
    none is an unhandled error (500: a page that failed says what went wrong)."""
    for address, page in pages.items():
        text = text_of(page)
        for secret in (PASSWORD, quote(PASSWORD, safe=""), url):
            assert secret not in text, f"{address} shows the datasource's password"
    errors = {address: page.status_code for address, page in pages.items()}
    assert not {a: s for a, s in errors.items() if s == 500}, "unhandled errors"


def run_pages(run_dir: Path, run: str) -> list[str]:
    """A run's page, its state, and each step's details and log."""
    steps = [step["name"] for step in read_run_file(run_dir / run)["steps"]]
    return [
        f"/runs/{run}", f"/runs/{run}/state",
        *(f"/runs/{run}/steps/{step}{log}" for step in steps for log in ("", "/log")),
    ]  # fmt: skip


def test_no_page_or_response_shows_the_password(server_with_password, tmp_path):
    url, failed, prefix = server_with_password
    settings = Settings(url, tmp_path / "runs", tmp_path)
    client = TestClient(create_app(settings), follow_redirects=False, raise_server_exceptions=False)
    start = [
        "/", "/runs", f"/runs?q={prefix}&state=failed", *run_pages(settings.run_dir, failed),
        "/runs/no-such-run", f"/runs/{failed}/steps/no-such-step/log",
        "/models", f"/models/{prefix}_m", f"/models/{prefix}_m?version=1",
        f"/models/{prefix}_m?version=99", f"/models/{prefix}_m/compare?a=1&b=1",
        "/models/no_such_model", "/editor", "/editor/complete?text=SELECT%20*%20FROM%20&cursor=14",
        "/no-such-page",
    ]  # fmt: skip
    pages = editor_answers(
        client,
        [
            f"SELECT class, count(*) AS n FROM {prefix}_iris GROUP BY class;",
            "SELECT * FROM no_such_table;",
            "SELEC 1;",
            f"SELECT * FROM {prefix}_iris TO TRAIN no.such_estimator LABEL class INTO x;",
            f"SELECT * FROM {prefix}_iris TO PREDICT {prefix}_out.class USING no_such_model;",
        ],
    )
    pages[f"POST /runs/{failed}/resume"], new = resumed(client, failed)
    pages |= crawl(client, start + run_pages(settings.run_dir, new), (failed, new, prefix))
    assert len(pages) > len(start) + 10, f"the pages link to little: {sorted(pages)}"
    assert_secret_kept(pages, url)


def test_no_error_response_shows_the_password_of_an_unreachable_server(tmp_path):
    url = f"mysql://{USER}:{PASSWORD}@127.0.0.1:{free_port()}/test"
    app = create_app(Settings(url, tmp_path, tmp_path))
    client = TestClient(app, follow_redirects=False, raise_server_exceptions=False)
    start = ["/", "/runs", "/runs/x", "/runs/x/state", "/runs/x/steps/s1-x/log", "/models",
             "/models/m", "/models/m/compare?a=1&b=2", "/editor",
             "/editor/complete?text=SELECT%20*%20FROM%20&cursor=14"]  # fmt: skip
    pages = crawl(client, start, ()) | editor_answers(client, ["SELECT 1;"])
    assert_secret_kept(pages, url)
    for address in ("/runs", "/models", "POST /editor/run SELECT 1;"):
        assert "connect" in pages[address].text, f"{address} does not say what went wrong"


# -- a POST from another site; the editor's checks -------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Demo, str]:
    """The browser tests' demo (a failed run) on DuckDB."""
    demo = make_demo(tmp_path_factory.mktemp("ui-security"))
    return demo, demo.run_program()


@pytest.fixture
def client(demo) -> TestClient:
    return TestClient(create_app(demo[0].settings()), follow_redirects=False)


@pytest.mark.parametrize("origin", [OTHER_SITE, "null", "http://testserver.elsewhere.example"])
def test_a_post_from_another_site_changes_nothing(demo, client, origin):
    demo, failed = demo
    runs = set(demo.run_dir.iterdir())
    forged = {"origin": origin}
    sql = "CREATE TABLE forged AS SELECT 1 AS x;"
    assert client.post("/editor/run", json={"sql": sql}, headers=forged).status_code == 403
    assert client.post("/editor/run", data={"sql": sql}, headers=forged).status_code == 403
    assert client.post(f"/runs/{failed}/resume", headers=forged).status_code == 403
    assert client.post(f"/runs/{failed}/stop", headers=forged).status_code == 403
    assert client.post("/editor/cancel", headers=forged).status_code == 403
    assert "forged" not in demo.tables()
    assert set(demo.run_dir.iterdir()) == runs, "a forged POST resumed the run"


def test_a_post_from_the_page_itself_is_run(demo, client):
    done = client.post(
        "/editor/run", json={"sql": "CREATE TABLE same_site AS SELECT 1 AS x;"},
        headers={"origin": SAME_SITE},
    )  # fmt: skip
    assert done.status_code == 200, done.text
    assert "same_site" in demo[0].tables()


REFUSED_BY_CHECK = [
    "SELECT class, count(*) AS n\nFROM iris_train GROUP BY class ORDER BY n DESC LIMT 2;",
    "SELEC 1;",
    "SELECT * FROM iris_train TO TRAIN xgboost.gbtree\nWITH train.num_boost_roun = 5\n"
    "LABEL class INTO m;",
    "SELECT * FROM iris_train TO TRAIN xgboost.gbtre LABEL class INTO m;",
    "SELECT * FROM iris_test TO PREDICT out.class USING no_such_model;",
]


@pytest.mark.parametrize("statement", REFUSED_BY_CHECK)
def test_the_editor_refuses_what_sqlml_check_refuses_with_its_message(
    demo, client, statement, capsys
):
    demo, _ = demo
    text = f"CREATE TABLE before_the_error AS SELECT 1 AS x;\n{statement}"
    file = demo.folder / "refused.sql"
    file.write_text(text)
    assert main(["check", str(file), "--datasource", demo.datasource]) == 1
    checked = capsys.readouterr().err
    found = re.match(r"\S+:(\d+):(\d+): error: (.*)\n(?:  hint: (.*))?", checked)
    assert found, checked
    line, column, message, hint = found.groups()

    answer = client.post("/editor/run", json={"sql": text}, headers={"origin": SAME_SITE})
    shown = text_of(answer)
    assert f"line {line}, column {column}" in shown, (checked, shown)
    assert message in shown and (hint is None or hint in shown), (checked, shown)
    assert "before_the_error" not in demo.tables(), "a statement ran although the check failed"


# encoded: a client removes a plain ".." segment before sending; the server decodes these
TRAVERSALS = ["%2e%2e", "..%2Fsecret.txt", "..%2F..%2Fsecret.txt", "%2e%2e%2fsecret.txt"]
ROUTES_WITH_NAMES = [
    "/runs/{x}", "/runs/{x}/state", "/runs/{run}/steps/{x}", "/runs/{run}/steps/{x}/log",
    "/runs/{x}/steps/{x}/log", "/runs/{x}/resume", "/runs/{x}/stop", "/models/{x}",
    "/models/{x}/compare?a=1&b=1", "/models/iris_model/plots/{x}/{x}",
    "/models/iris_model/plots/{run}/{x}", "/static/{x}",
    "/static/{x}%2F{x}%2Fsecret.txt", "/runs/{run}/steps/{x}%2F{x}%2Fsecret.txt/log",
]  # fmt: skip


def test_no_address_reads_a_file_outside_what_the_pages_show(demo, client):
    """Names in addresses (a run, a step, a model, a static file) that climb out of their
    folder with ``..`` read nothing: a file beside the run folder stays unread."""
    demo, failed = demo
    (demo.folder / "secret.txt").write_text("the-file-beside-the-run-folder")
    for route in ROUTES_WITH_NAMES:
        for climb in TRAVERSALS:
            address = route.replace("{run}", failed).replace("{x}", climb)
            for method in ("GET", "POST"):
                answer = client.request(method, address, headers={"origin": SAME_SITE})
                assert "the-file-beside" not in answer.text, (method, address)
                assert answer.status_code != 500, (method, address, answer.text[:300])


def test_no_page_can_be_framed_by_another_site(demo, client):
    """Another site's page cannot show sqlml ui in a frame and lead the user's clicks to
    Resume, Stop or Run (clickjacking): every page forbids framing."""
    demo, failed = demo
    for address in ("/runs", f"/runs/{failed}", "/models", "/models/iris_model", "/editor"):
        headers = client.get(address).headers
        policy = headers.get("content-security-policy", "")
        assert headers.get("x-frame-options", "").upper() == "DENY" or re.search(
            r"frame-ancestors\s+'none'", policy
        ), f"{address} may be framed: {dict(headers)}"


# -- TO RUN from the editor --------------------------------------------------------------

PWNED = 'SELECT 1 AS "touch", 2 AS "pwned.txt" TO RUN subprocess.run;'
OWN_MODULE = (
    "from pathlib import Path\n\n\ndef go(rows, marker):\n    Path(marker).write_text('ran')\n"
)


@pytest.fixture
def editor(tmp_path, monkeypatch) -> TestClient:
    """The editor of a page whose folder (and working folder) is ``tmp_path``, which holds
    the module ``editor_module``; no module is declared runnable."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SQLML_RUNNABLE", raising=False)
    (tmp_path / "editor_module.py").write_text(OWN_MODULE)
    settings = Settings(f"duckdb:///{tmp_path / 'editor.duckdb'}", tmp_path / "runs", tmp_path)
    return TestClient(create_app(settings), follow_redirects=False)


def test_the_editor_runs_no_function_of_pythons(editor, tmp_path):
    """The issue's statement: it would run ``touch pwned.txt``."""
    answer = editor.post("/editor/run", json={"sql": PWNED}, headers={"origin": SAME_SITE})
    assert answer.status_code == 200 and not answer.json()["ok"]
    shown = html.unescape(answer.json()["html"])
    assert "subprocess is a module of Python's standard library" in shown
    assert not (tmp_path / "pwned.txt").exists()


def test_the_editor_runs_declared_modules_only(editor, tmp_path, monkeypatch):
    """The page has no program folder: a module beside it (one the editor could have
    written with DuckDB's COPY) runs only once declared where the page was started."""
    marker = tmp_path / "ran"
    sql = f"SELECT 1 AS i TO RUN editor_module.go WITH marker = '{marker}';"
    answer = editor.post("/editor/run", json={"sql": sql}, headers={"origin": SAME_SITE})
    assert not answer.json()["ok"]
    shown = html.unescape(answer.json()["html"])
    assert "here there is no program folder, and the module editor_module is not declared" in shown
    assert "SQLML_RUNNABLE" in shown
    assert not marker.exists()

    (tmp_path / "editor_script.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    script = "SELECT 1 AS i TO RUN editor_script.py;"
    answer = editor.post("/editor/run", json={"sql": script}, headers={"origin": SAME_SITE})
    assert "no program folder, and so no script to run" in html.unescape(answer.json()["html"])
    assert not marker.exists()

    monkeypatch.setenv("SQLML_RUNNABLE", "editor_module")
    answer = editor.post("/editor/run", json={"sql": sql}, headers={"origin": SAME_SITE})
    assert answer.json()["ok"], answer.json()["html"]
    assert marker.read_text() == "ran"
