"""``train.external_memory`` with XGBoost on a temporary folder too small for its pages: one
error, never XGBoost's C++ abort (``terminate called ... dmlc::Error``, SIGABRT, the run left
``running`` and its pages behind), on every database; and the pages of a training whose
process died anyway are removed by the next one.

The small disk is a 1 MiB tmpfs mounted in a mount namespace of the child's own
(``unshare --map-root-user --mount``: no root needed, nothing mounted outside the test).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import KINDS, ROOT, datasource_url
from fault_support import run_id, step_records

from sqlml.datasources import connect
from sqlml.models.store import ModelStore
from sqlml.models.xgboost import pages

GUARD = 300  # seconds: a hang guard, not a measure
ROWS = 60_000  # XGBoost's pages of them: about 1.4 MB, more than the disk holds
SMALL_DISK = """
mount -t tmpfs -o size=1m tmpfs "$SMALL" || exit 90
TMPDIR="$SMALL" "$@"
echo "status=$?"
echo "left=$(ls -A "$SMALL")"
"""


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--map-root-user", "--mount", "true"], check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare (user and mount namespaces)")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tree_method", ["auto", "hist", "approx"])
def test_external_memory_on_a_full_disk_is_one_error(kind, tree_method, tmp_path, unique_name):
    url = datasource_url(kind, tmp_path)
    rng = np.random.default_rng(0)
    rows = {"a": rng.random(ROWS), "b": rng.random(ROWS), "y": np.arange(ROWS) % 2}
    ds = connect(url)
    ds.write_table([unique_name], rows)
    ds.close()
    model = f"{unique_name}_m"
    program = tmp_path / "program.sql"
    program.write_text(
        f"SELECT a, b, y FROM {unique_name} TO TRAIN xgboost.gbtree WITH "
        f"objective = 'binary:logistic', tree_method = '{tree_method}', "
        f"train.num_boost_round = 3, train.external_memory = true LABEL y INTO {model};\n"
    )
    small = tmp_path / "small"
    small.mkdir()
    env = {**os.environ, "SMALL": str(small), "SQLML_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", url]
    try:
        done = subprocess.run(
            ["unshare", "--map-root-user", "--mount", "sh", "-c", SMALL_DISK, "sh", *command],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=GUARD,
            check=False,
        )
        err = done.stderr
        assert done.returncode == 0, (done.stdout, err)  # the shell's: it reports below
        assert "status=1\n" in done.stdout, (done.stdout, err)  # not 134: SIGABRT
        assert "left=\n" in done.stdout, done.stdout  # no page behind
        assert "terminate called" not in err and "Traceback" not in err, err
        assert err.count("error:") == 1, err
        assert "XGBoost's external-memory pages of the rows read so far need about" in err, err
        assert "hint: free space there, or set TMPDIR to a folder on a larger disk" in err
        [(state, _, _)] = step_records(url, run_id(err)).values()
        assert state == "failed"
        ds = connect(url)
        try:
            assert ModelStore(ds).list_versions(model) == []
            assert len(ds.execute(f"SELECT * FROM {unique_name}").rows) == ROWS
        finally:
            ds.close()
    finally:
        ds = connect(url)
        try:
            ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        finally:
            ds.close()


def test_the_pages_of_a_dead_training_are_removed_by_the_next(tmp_path, monkeypatch):
    """A training whose process died (XGBoost aborting on a disk filled from elsewhere) left
    its folder; the next training's folder removes it, and leaves a living training's."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{pages.PREFIX}dead"
    dead.mkdir()
    (dead / "lock").write_text("")
    (dead / "cache.0.page").write_bytes(b"\0" * 1000)
    unlocked = tmp_path / f"{pages.PREFIX}making"  # no lock yet: being made
    unlocked.mkdir()
    with pages.folder() as living:
        assert not dead.exists()
        assert unlocked.exists()
        with pages.folder() as other:
            assert living.exists() and other != living
    assert not living.exists()


def test_a_killed_training_leaves_its_pages_to_the_next(tmp_path):
    """The real thing: a process holding a page folder is killed (SIGKILL, as an abort
    would end it); the next folder made removes it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        cwd=ROOT,
    )
    try:
        left = Path(holder.stdout.readline().strip())
        assert left.exists()
        check = subprocess.run([sys.executable, "-c", MAKE], env={**os.environ,
                               "TMPDIR": str(tmp_path)}, capture_output=True, text=True,
                               timeout=GUARD, check=True)  # fmt: skip
        assert left.exists(), check.stderr  # alive: kept
        holder.kill()
        holder.wait(GUARD)
        subprocess.run([sys.executable, "-c", MAKE], env={**os.environ, "TMPDIR": str(tmp_path)},
                       timeout=GUARD, check=True)  # fmt: skip
        assert not left.exists()
    finally:
        holder.kill()


HOLD = """
import sys, time
from sqlml.models.xgboost import pages
with pages.folder() as folder:
    (folder / "cache.0.page").write_bytes(b"0" * 1000)
    print(folder, flush=True)
    time.sleep(3600)
"""
MAKE = """
from sqlml.models.xgboost import pages
with pages.folder():
    pass
"""
