"""sqlml ui and the database it serves: no page keeps a DuckDB file open between requests
(another process opens it at once), a file another process holds is a 503 page that says so
and loads again (the editor's run tried again), the runs list shows the runs of its own
datasource only, though the run folder is shared, and ``--no-file-access`` keeps the
editor's statements from the server's files (DuckDB, SQLite) in a way no statement undoes."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import duckdb_held

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from sqlml.backends.local.run_file import read_run_file
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.datasources.duckdb import source as duckdb_source
from sqlml.errors import DatasourceError
from sqlml.ui.server import Settings, create_app

GUARD = 300  # seconds a child process may take: a deadlock guard
ROW = re.compile(r'<tr class="run" data-run="([^"]+)"')
TRAIN = """SELECT * FROM tr TO TRAIN xgboost.gbtree
WITH objective = 'binary:logistic', train.num_boost_round = 2 LABEL y INTO lock_model;"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "runs"))
    return tmp_path


@pytest.fixture
def url(folder: Path) -> str:
    made = f"duckdb:///{folder / 'served.duckdb'}"
    ds = connect(made)
    ds.execute("CREATE TABLE tr AS SELECT i::DOUBLE AS x, i % 2 AS y FROM range(100) AS r(i)")
    ds.close()
    return made


@pytest.fixture
def ui(folder: Path, url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(url, folder / "runs", folder))) as client:
        yield client


def opened_elsewhere(url: str) -> subprocess.CompletedProcess[str]:
    """``sqlml -e 'SELECT 1'`` on ``url`` in another process."""
    return subprocess.run(
        [sys.executable, "-m", "sqlml", "-e", "SELECT 1", "--datasource", url],
        capture_output=True, text=True, timeout=GUARD,
    )  # fmt: skip


def run_program(folder: Path, url: str, name: str) -> str:
    """``sqlml run`` of a small program on ``url``; the run's id."""
    (folder / f"{name}.sql").write_text("CREATE TABLE made AS SELECT 1 AS x;\n")
    runs = folder / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    assert main(["run", f"{name}.sql", "--datasource", url]) == 0
    (made,) = set(runs.iterdir()) - before
    return made.name


def test_no_page_keeps_the_file_open_between_requests(ui: TestClient, url: str) -> None:
    requests = [
        lambda: ui.get("/runs"),
        lambda: ui.get("/models"),
        lambda: ui.post("/editor/run", json={"sql": "SELECT count(*) AS n FROM tr;"}),
        lambda: ui.post("/editor/run", json={"sql": "CREATE TABLE t2 AS SELECT 2 AS b;"}),
        lambda: ui.post("/editor/run", json={"sql": "SELECT nope FROM tr;"}),  # an error
        lambda: ui.post("/editor/run", json={"sql": TRAIN}),
        lambda: ui.get("/models/lock_model"),
        lambda: ui.post("/editor/run", json={"sql": "SELECT PREDICT(lock_model) FROM tr;"}),
        lambda: ui.get("/editor/complete", params={"text": "SELECT * FROM t", "cursor": "15"}),
    ]
    for request in requests:
        answer = request()
        assert answer.status_code == 200, answer.text
        other = opened_elsewhere(url)
        assert other.returncode == 0, other.stderr
    assert (
        "<tr><td>100</td></tr>"
        in ui.post("/editor/run", json={"sql": "SELECT count(*) AS n FROM tr;"}).json()["html"]
    )


def test_a_busy_file_is_a_page_that_says_so_and_loads_again(
    ui: TestClient, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(duckdb_source, "LOCK_WAIT", 0.2)  # the wait for the file, shortened
    with duckdb_held(url):
        models = ui.get("/models?q=x")
        assert models.status_code == 503 and models.headers["retry-after"] == "5"
        assert "another process has it open" in models.text
        assert '<meta http-equiv="refresh" content="5; url=/models?q=x">' in models.text
        assert "Traceback" not in models.text and "Could not set lock" not in models.text
        scripted = ui.post("/editor/run", json={"sql": "SELECT 1;"})
        assert scripted.status_code == 503 and scripted.headers["retry-after"] == "5"
        assert scripted.json()["busy"] is True and scripted.json()["retry"] == 5
        assert "another process has it open" in scripted.json()["error"]
        form = ui.post("/editor/run", data={"sql": "SELECT 1;"})
        assert form.status_code == 503 and "run it again in a few seconds" in form.text
        assert "http-equiv" not in form.text  # a statement is not run again unasked
        runs = ui.get("/runs")  # the run folder's runs, with a note saying why
        assert runs.status_code == 200 and "another process has it open" in runs.text
    assert ui.get("/models").status_code == 200
    answer = ui.post("/editor/run", json={"sql": "SELECT x FROM held;"})
    assert answer.status_code == 200 and "<td>1</td>" in answer.json()["html"]


def test_the_runs_list_shows_its_own_datasources_runs_only(
    ui: TestClient, folder: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    other_url = f"duckdb:///{folder / 'other.duckdb'}"
    own, other = run_program(folder, url, "own"), run_program(folder, other_url, "other")
    assert (
        read_run_file(folder / "runs" / own)["datasource"]
        == f"duckdb:///{folder / 'served.duckdb'}"
    )
    assert ROW.findall(ui.get("/runs").text) == [own]  # from the run record
    assert ui.get(f"/runs/{other}").status_code == 404
    assert ui.get(f"/runs/{own}").status_code == 200
    monkeypatch.setattr(duckdb_source, "LOCK_WAIT", 0.2)
    with duckdb_held(url):  # the record cannot be read: the run folder's runs of this datasource
        page = ui.get("/runs").text
        assert "cannot be read now" in page and ROW.findall(page) == [own]
    served_elsewhere = TestClient(create_app(Settings(other_url, folder / "runs", folder)))
    assert ROW.findall(served_elsewhere.get("/runs").text) == [other]


def editor(ui: TestClient, sql: str) -> tuple[bool, str]:
    """Whether the editor ran ``sql`` without error, and what its result says (as text)."""
    answer = ui.post("/editor/run", json={"sql": sql})
    assert answer.status_code == 200, answer.text
    shown = html.unescape(re.sub(r"<[^>]+>", " ", answer.json()["html"]))
    return answer.json()["ok"], " ".join(shown.split())


def served(folder: Path, url: str, file_access: bool) -> TestClient:
    return TestClient(create_app(Settings(url, folder / "runs", folder, file_access=file_access)))


@pytest.mark.parametrize("file_access", [True, False])
def test_the_editor_reads_and_writes_files_on_duckdb_unless_forbidden(
    folder: Path, url: str, file_access: bool
) -> None:
    written = folder / "written.csv"
    hostname = Path("/etc/hostname").read_text().strip()
    with served(folder, url, file_access) as ui:
        read = editor(ui, "SELECT * FROM read_csv('/etc/hostname', header = false);")
        wrote = editor(ui, f"COPY (SELECT 1 AS one) TO '{written}';")
        attached = editor(ui, f"ATTACH '{folder / 'made.duckdb'}' AS made;")
        if file_access:
            assert read[0] and hostname in read[1]
            assert wrote[0] and written.read_text() == "one\n1\n"
            assert attached[0] and (folder / "made.duckdb").exists()
            return
        refused = "file system operations are disabled by configuration"
        for ok, said in (read, wrote, attached):
            assert not ok and refused in said and "sqlml ui --no-file-access" in said, said
        assert hostname not in read[1] and not written.exists()
        assert not (folder / "made.duckdb").exists()
        for undo in ("SET enable_external_access = true;", "SET lock_configuration = false;",
                     "RESET enable_external_access;"):  # fmt: skip
            ok, said = editor(ui, undo)
            assert not ok and "the configuration has been locked" in said, said
        ok, said = editor(ui, "SELECT * FROM read_csv('/etc/hostname', header = false);")
        assert not ok and refused in said  # still forbidden, in the next run too
        ok, said = editor(
            ui, "CREATE TABLE kept AS SELECT x * 2 AS x FROM tr; SELECT sum(x) FROM kept;"
        )
        assert ok and "9900" in said  # tables are read and written as ever
        ok, said = editor(ui, TRAIN)  # and models trained, then called
        assert ok, said
        ok, said = editor(ui, "SELECT count(PREDICT(lock_model)) AS n FROM tr;")
        assert ok and "100" in said, said
        assert ui.get("/models/lock_model").status_code == 200
    other = opened_elsewhere(url)  # the file is free once the page is idle
    assert other.returncode == 0, other.stderr
    ds = connect(url)  # the settings were the closed database's: a new one reads files
    assert ds.execute("SELECT count(*) FROM read_csv('/etc/hostname', header = false)").rows
    ds.close()


def test_a_connection_opened_while_files_are_forbidden_shares_the_settings(
    folder: Path, url: str
) -> None:
    """DuckDB's settings are its database's: a page's read during an editor run opens (its
    file search path is not set on a locked configuration) and is forbidden files too."""
    editing = connect(url, folder)
    editing.forbid_file_access()
    page = connect(url, folder)
    page.forbid_file_access()  # already so: nothing to set
    assert page.execute("SELECT count(*) FROM tr").rows == [(100,)]
    with pytest.raises(DatasourceError, match="disabled by configuration"):
        page.execute("SELECT * FROM read_csv('/etc/hostname')")
    page.close()
    editing.close()


@pytest.mark.parametrize("file_access", [True, False])
def test_the_editor_attaches_files_on_sqlite_unless_forbidden(
    folder: Path, file_access: bool
) -> None:
    attached, vacuumed = folder / "attached.db", folder / "copy.db"
    with served(folder, f"sqlite:///{folder / 'served.sqlite'}", file_access) as ui:
        results = [
            editor(ui, f"ATTACH '{attached}' AS other;"),
            editor(ui, f"VACUUM INTO '{vacuumed}';"),
        ]
        assert editor(ui, "CREATE TABLE t AS SELECT 1 AS a; SELECT a FROM t;")[0]
    assert attached.exists() == vacuumed.exists() == file_access
    for ok, said in results:
        assert ok == file_access, said
        if not file_access:
            assert "sqlml ui --no-file-access" in said, said
            assert "not authorized" in said or "authorization denied" in said, said


def test_no_file_access_is_kept_when_sqlml_ui_starts_itself_again(folder: Path, url: str) -> None:
    """A token on the command line makes ``sqlml ui`` start itself again without it: the
    option goes along."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "sqlml", "ui", "--datasource", url, "--port", str(port),
         "--token", "the-token", "--no-file-access"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None and process.stderr.readline().startswith("sqlml ui:")
        answer = _post_when_listening(
            f"http://127.0.0.1:{port}/editor/run",
            {"sql": "SELECT * FROM read_csv('/etc/hostname');"},
            {"authorization": "Bearer the-token"},
        )
        assert answer["ok"] is False and "disabled by configuration" in answer["html"]
        arguments = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode().split("\0")
        assert "--no-file-access" in arguments and "the-token" not in arguments
    finally:
        process.terminate()
        process.wait(timeout=GUARD)
        process.stderr.close()


def _post_when_listening(address: str, body: dict, headers: dict) -> dict:
    """The JSON answer to a POST of ``body``, once the server listens (a deadlock guard)."""
    import json
    import time
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + GUARD
    request = urllib.request.Request(
        address, json.dumps(body).encode(), {"content-type": "application/json", **headers}
    )
    while True:
        try:
            with urllib.request.urlopen(request, timeout=GUARD) as answer:
                return json.loads(answer.read())
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
