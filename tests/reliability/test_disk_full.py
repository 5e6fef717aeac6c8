"""A full disk or an unwritable home folder: sqlml's own local files (the input cache, step
logs, the shell's history) are skipped with one warning each, and statements go on.

``sqlml run`` runs in a child process under a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ
ignored: a write past the limit fails with EFBIG, as on a full disk), with a server
datasource (MySQL, PostgreSQL) whose data files the limit does not touch: only sqlml's local
files hit it. The unwritable home is a folder without write permission; when the tests run
as root, the child runs without the capability that lets root write anywhere
(CAP_DAC_OVERRIDE), so the permission holds for it too.
"""

from __future__ import annotations

import ctypes
import io
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url, import_or_skip

from sqlml.datasources import connect
from sqlml.models.store import ModelStore

FILE_SIZE_LIMIT = 200  # bytes: smaller than a cache entry and than a training step's log
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def labelled(count: int, seed: int) -> dict[str, np.ndarray]:
    """Rows whose label y is 1 exactly when a + b > 10."""
    rng = np.random.default_rng(seed)
    columns = {"id": np.arange(count), "a": rng.uniform(0, 10, count)}
    columns["b"] = rng.uniform(0, 10, count)
    columns["y"] = (columns["a"] + columns["b"] > 10).astype(np.int64)
    return columns


@pytest.fixture(params=["mysql", "postgresql"])
def server(request, tmp_path, unique_name) -> Iterator[tuple[str, dict[str, str]]]:
    """A server datasource holding training and test rows, and the names a program uses."""
    url = datasource_url(request.param, tmp_path)
    names = {part: f"{unique_name}_{part}" for part in ("train", "test", "m", "pred")}
    ds = connect(url)
    ds.write_table([names["train"]], labelled(2000, seed=1))
    ds.write_table([names["test"]], labelled(100, seed=2))
    ds.close()
    yield url, names
    ds = connect(url)
    for part in ("train", "test", "pred"):
        ds.execute(f"DROP TABLE IF EXISTS {names[part]}")
    ModelStore(ds).drop(names["m"])
    ds.close()


def write_program(folder: Path, names: dict[str, str]) -> Path:
    file = folder / "program.sql"
    file.write_text(
        f"SELECT a, b, y FROM {names['train']} TO TRAIN xgboost.gbtree "
        f'WITH objective = "binary:logistic", train.num_boost_round = 30 '
        f"LABEL y INTO {names['m']};\n"
        f"SELECT id, a, b FROM {names['test']} TO PREDICT {names['pred']}.y USING {names['m']};\n"
        f"SELECT count(*) AS n FROM {names['pred']};\n"
        "SELECT 1 AS one;\n"
    )
    return file


def sqlml(
    args: list[str], env: dict[str, str], preexec: Callable[[], None], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlml", *args],
        env=env,
        cwd=cwd,
        preexec_fn=preexec,
        capture_output=True,
        text=True,
        timeout=300,
    )


def file_size_limit() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def without_root_powers() -> None:
    """As root: drop the capabilities that ignore file permissions, for the exec'd program."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def check_predictions(url: str, names: dict[str, str]) -> None:
    ds = connect(url)
    try:
        found = ds.execute(
            f"SELECT p.y, t.y FROM {names['pred']} AS p JOIN {names['test']} AS t ON p.id = t.id"
        ).rows
    finally:
        ds.close()
    assert len(found) == 100
    assert sum(int(p) == int(t) for p, t in found) >= 90


def warnings_by_kind(stderr: str) -> dict[str, int]:
    lines = [line for line in stderr.splitlines() if line.startswith("sqlml: warning:")]
    kinds = {"cache": "input cache", "logs": "step logs", "history": "history"}
    counts = {kind: sum(text in line for line in lines) for kind, text in kinds.items()}
    assert sum(counts.values()) == len(lines), lines
    return counts


def test_a_file_size_limit_leaves_statements_running(server, tmp_path):
    """Every local write past 200 bytes fails with EFBIG: the cache entry half way, the
    training step's log after its first lines. TO TRAIN, TO PREDICT and SELECTs succeed, each
    kind of failure is one warning, and no temporary file is left in the cache folder."""
    url, names = server
    file = write_program(tmp_path, names)
    cache, runs = tmp_path / "cache", tmp_path / "runs"
    env = {**os.environ, "SQLML_CACHE_DIR": str(cache), "SQLML_RUN_DIR": str(runs)}
    env.pop("SQLML_CACHE", None)
    for _ in range(2):  # the second run finds the same full cache and log folders
        done = sqlml(
            ["run", str(file), "--datasource", url, "--format", "csv"],
            env,
            file_size_limit,
            tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["n", "100", "one", "1"]
        assert "Traceback" not in done.stderr
        warnings = warnings_by_kind(done.stderr)
        assert warnings == {"cache": 1, "logs": 1, "history": 0}, done.stderr
        assert "File too large" in done.stderr
        check_predictions(url, names)
    assert [p.name for p in cache.iterdir() if p.suffix != ""] == []  # no .tmp, no .npz
    logs = [log for run in runs.iterdir() for log in run.glob("*.log")]
    assert len(logs) == 8 and all(log.stat().st_size <= FILE_SIZE_LIMIT for log in logs)


@pytest.fixture
def read_only_folder() -> Iterator[Path]:
    """A folder nobody may write to, that any user can enter (not under pytest's private
    temporary folder)."""
    folder = Path(tempfile.mkdtemp(prefix="sqlml-read-only-"))
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)
    assert not list(folder.iterdir()), "sqlml wrote into the read-only home"
    folder.rmdir()


@pytest.mark.parametrize("home", ["read-only", "missing"])
def test_an_unwritable_home_leaves_statements_running(server, tmp_path, read_only_folder, home):
    """HOME is a read-only folder, or a missing one that cannot be created (a pod run as
    another user); SQLML_CACHE_DIR and SQLML_RUN_DIR are not set."""
    url, names = server
    file = write_program(tmp_path, names)
    env = {**os.environ, "HOME": str(read_only_folder / ("missing" if home == "missing" else ""))}
    for name in ("SQLML_CACHE", "SQLML_CACHE_DIR", "SQLML_RUN_DIR", "XDG_DATA_HOME"):
        env.pop(name, None)
    done = sqlml(
        ["run", str(file), "--datasource", url, "--format", "csv"],
        env,
        without_root_powers,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["n", "100", "one", "1"]
    assert "Traceback" not in done.stderr
    assert warnings_by_kind(done.stderr) == {"cache": 1, "logs": 1, "history": 0}, done.stderr
    assert re.search(r"sqlml: run [\w-]+: 4 steps, no logs", done.stderr)
    check_predictions(url, names)


def test_the_shell_without_a_writable_history(tmp_path, read_only_folder):
    """The interactive shell starts, runs statements and ends normally; its history is kept
    for the session only, with one warning."""
    pexpect = import_or_skip("pexpect")
    env = {**os.environ, "HOME": str(read_only_folder), "TERM": "xterm", "NO_COLOR": "1"}
    env |= {"PROMPT_TOOLKIT_NO_CPR": "1", "PAGER": "cat", "SQLML_CACHE": "off"}
    for name in ("SQLML_HISTORY", "XDG_DATA_HOME"):
        env.pop(name, None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sqlml", "repl", "--datasource", "duckdb:///:memory:"],
        env=env,
        cwd=str(tmp_path),
        preexec_fn=without_root_powers,
        dimensions=(60, 200),
        encoding="utf-8",
        timeout=600,  # a deadlock guard
    )
    child.logfile_read = io.StringIO()
    try:
        child.expect(r"sqlml \[[^\]]*\]>")
        for value in (41, 42):
            child.send(f"SELECT {value} AS answer;\r")
            child.expect(rf"\b{value}\b.*\(1 row\)")
            # the next prompt: Ctrl-D sent before it would be lost
            child.expect(r"sqlml \[[^\]]*\]>")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    output = child.logfile_read.getvalue()
    assert child.exitstatus == 0, output
    assert "Traceback" not in output
    assert output.count("sqlml: warning:") == 1, output
    assert "sqlml: warning: the shell's history is not kept" in output
