"""TO RUN's children: they end with sqlml however it ends (SIGTERM, SIGKILL), their
hand-over folder with them; their output is bounded wherever sqlml keeps or sends it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import datasource_url, fetch_rows, run_program

from sqlml.datasources import connect
from sqlml.runtime.bounds import LINE_LIMIT, LOG_LIMIT, LOG_TAIL, MESSAGE_LIMIT

GUARD = 120  # seconds a test waits for a process or a file at most: a deadlock guard

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's prctl")

SPAWNER = '''
import os
import subprocess
import sys
import time
from pathlib import Path


def spawn(rows):
    """Start a process in a session of its own that starts one more, say their pids and the
    hand-over folder, and sleep."""
    grandchild = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, time; p = subprocess.Popen(['sleep', '600']); "
         f"open({PIDS!r} + '.deep', 'w').write(str(p.pid)); time.sleep(600)"],
        start_new_session=True,
    )
    folder = Path(os.environ["SQLML_RUN"]).parent
    Path(PIDS + ".tmp").write_text(f"{os.getpid()} {grandchild.pid} {folder}")
    os.rename(PIDS + ".tmp", PIDS)
    time.sleep(600)
'''

LONG_LINE = '''
import sys


def long_line(rows):
    """One line of 100 MB, then a failure."""
    for _ in range(1000):
        sys.stdout.write("x" * 100_000)
    sys.stdout.write("\\n")
    raise RuntimeError("after the long line")
'''


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        assert time.monotonic() < deadline, f"{what}: still not so after {GUARD} s"
        time.sleep(0.05)


def _sqlml_run(tmp_path: Path, text: str, module: str, source: str) -> subprocess.Popen[str]:
    """``sqlml run`` of ``text`` in ``tmp_path`` (beside ``module``.py holding ``source``)."""
    (tmp_path / f"{module}.py").write_text(f"PIDS = {str(tmp_path / 'pids')!r}\n" + source)
    (tmp_path / "program.sql").write_text(text)
    url = f"duckdb:///{tmp_path / 'test.duckdb'}"
    env = {**os.environ, "SQLML_RUN_DIR": str(tmp_path / "runs")}
    return subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", "program.sql", "--datasource", url],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_state(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The run's state and its steps' in its record."""
    ds = connect(f"duckdb:///{tmp_path / 'test.duckdb'}")
    try:
        (state,) = ds.execute("SELECT state FROM sqlml_runs").rows[0]
        steps = dict(ds.execute("SELECT step, state FROM sqlml_run_steps").rows)
    finally:
        ds.close()
    return state, steps


@pytest.mark.parametrize("program", ["spawner.spawn", "spawner.py"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_the_program_and_all_it_started_end_with_sqlml(tmp_path, signum, program):
    """SIGTERM or SIGKILL to ``sqlml run`` during a TO RUN (of a function, of a script) ends
    the program, a process it started in a session of its own and that one's child; the
    hand-over folder is removed. SIGTERM cancels the run as Ctrl-C does (recorded cancelled,
    status 143)."""
    text = f"CREATE TABLE t AS SELECT 1 AS i;\nSELECT * FROM t TO RUN {program} INTO out;\n"
    source = SPAWNER + ("spawn(None)\n" if program.endswith(".py") else "")
    sqlml = _sqlml_run(tmp_path, text, "spawner", source)
    pids = tmp_path / "pids"
    _wait(lambda: pids.exists() and Path(f"{pids}.deep").exists(), "the program started")
    child, grandchild, folder = pids.read_text().split(" ", 2)
    deep = int(Path(f"{pids}.deep").read_text())
    assert Path(folder, "rows.parquet").is_file()
    sqlml.send_signal(signum)
    _, err = sqlml.communicate(timeout=GUARD)
    for pid in (int(child), int(grandchild), deep):
        _wait(lambda pid=pid: not _alive(pid), f"process {pid} ended")
    _wait(lambda: not Path(folder).exists(), "the hand-over folder is removed")
    if signum == signal.SIGTERM:
        assert sqlml.returncode == 143, err
        assert "the statement was cancelled (SIGTERM); nothing it did was committed" in err
        assert "Traceback" not in err
        state, steps = _run_state(tmp_path)
        assert (state, sorted(steps.values())) == ("cancelled", ["cancelled", "succeeded"])
    else:
        assert sqlml.returncode == -signal.SIGKILL


def test_a_hand_over_folder_left_by_a_killed_sqlml_is_removed_by_the_next_to_run(tmp_path):
    """A folder whose sqlml is gone (killed while it wrote the rows) goes at the next TO RUN."""
    import tempfile

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"sqlml-run-{dead.pid}-test"
    stale.mkdir()
    (stale / "rows.parquet").write_text("rows")
    (tmp_path / "ok.py").write_text("def same(rows):\n    return {'out': rows}\n")
    text = "SELECT 1 AS i TO RUN ok.same INTO out;\n"
    sqlml = _sqlml_run(tmp_path, text, "unused", "")
    _, err = sqlml.communicate(timeout=GUARD)
    assert sqlml.returncode == 0, err
    assert not stale.exists()


def test_a_100_mb_line_is_bounded_wherever_it_goes(tmp_path):
    """A program printing one line of 100 MB and failing: its error (told, recorded, in
    states.jsonl, on the runs page) is small and says where the output is; the step log
    keeps it up to LOG_LIMIT; sqlml's memory stays small."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from sqlml.ui.server import Settings, create_app

    (tmp_path / "printer.py").write_text(LONG_LINE)
    (tmp_path / "program.sql").write_text("SELECT 1 AS i TO RUN printer.long_line INTO out;\n")
    url = f"duckdb:///{tmp_path / 'test.duckdb'}"
    rss = tmp_path / "rss"
    measured = (
        "import sys\nfrom pathlib import Path\nfrom sqlml.cli import main\n"
        f"status = main(['run', 'program.sql', '--datasource', {url!r}])\n"
        # VmHWM, not ru_maxrss: exec keeps the parent's (pytest's) high-water mark in the latter
        "peak = Path('/proc/self/status').read_text().split('VmHWM:')[1].split()[0]\n"
        f"Path({str(rss)!r}).write_text(peak)\n"
        "sys.exit(status)\n"
    )
    env = {**os.environ, "SQLML_RUN_DIR": str(tmp_path / "runs")}
    done = subprocess.run(
        [sys.executable, "-c", measured], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "RuntimeError: after the long line" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr  # the program's, in its lines
    assert re.search(r"x … \[99\d{6} more characters; the step log \S+ keeps them\]", done.stderr)
    assert len(done.stderr) < 100_000
    assert int(rss.read_text()) < 400 * 1024  # kilobytes: sqlml's own memory
    (run_id,) = os.listdir(tmp_path / "runs")
    run_dir = tmp_path / "runs" / run_id
    (log,) = run_dir.glob("*.log")
    step = log.stem
    assert LOG_LIMIT < log.stat().st_size < LOG_LIMIT + MESSAGE_LIMIT
    assert (run_dir / "states.jsonl").stat().st_size < 2 * MESSAGE_LIMIT
    ds = connect(url)
    try:
        (error,) = ds.execute("SELECT error FROM sqlml_run_steps").rows[0]
    finally:
        ds.close()
    assert "failed (exit status 1)" in error and len(error) < 20 * LINE_LIMIT + 1000
    ui = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)))
    state, details = ui.get(f"/runs/{run_id}/state"), ui.get(f"/runs/{run_id}/steps/{step}")
    assert state.json()["state"] == "failed"
    assert "after the long line" in details.json()["error"]
    assert len(state.content) + len(details.content) < 2 * MESSAGE_LIMIT
    shown = ui.get(f"/runs/{run_id}/steps/{step}/log").text
    assert shown.startswith(f"… [{log.stat().st_size - LOG_TAIL} bytes before these, in {log}]")
    assert len(shown.encode()) < LOG_TAIL + 1000
    assert json.loads((run_dir / "states.jsonl").read_text().splitlines()[-1])["run"] == "failed"


UNHELD = '''
def bad(rows, case):
    """Columns a database cannot hold as they are, by ``case``."""
    columns = {
        "nul": {"a\\0b": [1], "a\\0c": [2]},
        "case": {"A": [1], "a": [2]},
        "empty": {"": [1]},
        "object": {"n": [1], "o": [object()]},
        "set": {"o": [{1, 2}]},
        "nested": {"o": [{"k": {"n": 1}}]},
        "list": {"o": [[1], [1, 2]]},
    }[case]
    return {TABLE: columns}
'''

REFUSED = {
    "nul": r"the column 'a\\x00b': a column's name is non-empty text without NUL",
    "case": "the column 'a': its name differs from 'A' only in case",
    "empty": "the column '': a column's name is non-empty text without NUL",
    "object": "the column 'o': a database holds no object value",
    "set": r"the column 'o': a database holds no set value \(\{1, 2\}\)",
    "nested": "the column 'o': a database holds no dict value",
    "list": r"the column 'o': a database holds no list value \(\[1\]\)",
}


@pytest.mark.parametrize("server", ["duckdb", "sqlite", "mysql", "postgresql"])
@pytest.mark.parametrize("case", list(REFUSED))
def test_columns_a_database_cannot_hold_are_refused_naming_them(
    tmp_path, capsys, unique_name, server, case
):
    """One error naming the INTO table and the column; the table as it was."""
    url = datasource_url(server, tmp_path)
    t = unique_name
    (tmp_path / f"unheld_{t}.py").write_text(f"TABLE = {t!r}\n" + UNHELD)
    try:
        status, err = run_program(tmp_path, url, f"CREATE TABLE {t} AS SELECT 7 AS n;\n", capsys)
        assert status == 0, err
        text = (
            f"SELECT 1 AS i TO RUN unheld_{t}.bad "
            f"WITH case = '{case}', output.replace = true INTO {t};\n"
        )
        status, err = run_program(tmp_path, url, text, capsys)
        assert status == 1
        assert f"the program unheld_{t}.bad failed (exit status 1); its last lines:" in err
        assert re.search(rf"error: write\('{t}'\): {REFUSED[case]}", err), err
        assert "Traceback" not in err
        assert fetch_rows(url, f"SELECT * FROM {t}") == [(7,)]
    finally:
        ds = connect(url)
        try:
            ds.execute(f"DROP TABLE IF EXISTS {t}")
        finally:
            ds.close()
