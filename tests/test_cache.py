"""The input cache: hits while tables are unchanged, misses after a change of rows or
columns, bounded size; an entry it cannot write or read costs a warning or a read, never the
statement."""

from __future__ import annotations

import errno
import os
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url

from sqlml import local_files
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore
from sqlml.runtime import cache as cache_module
from sqlml.runtime.cache import InputCache


@pytest.fixture
def table(datasource, unique_name):
    datasource.write_table(
        [unique_name],
        {"x": np.arange(5, dtype=np.int64), "s": np.array(["a", None, "c", "d", "e"], object)},
    )
    yield unique_name
    datasource.execute(f"DROP TABLE {unique_name}")


def reads_counted(datasource, monkeypatch) -> list[str]:
    calls: list[str] = []
    original = datasource.read

    def counting(select, reporter=None):
        calls.append(select)
        return original(select, reporter)

    monkeypatch.setattr(datasource, "read", counting)
    return calls


def test_hits_until_the_table_changes(datasource, table, tmp_path, monkeypatch):
    cache = InputCache(tmp_path / "cache")
    calls = reads_counted(datasource, monkeypatch)
    select = f"SELECT x, s FROM {table} ORDER BY x"
    first = cache.read(datasource, select)
    second = cache.read(datasource, select)
    assert len(calls) == 1
    assert list(second) == ["x", "s"]
    assert second["x"].tolist() == first["x"].tolist() == [0, 1, 2, 3, 4]
    assert second["s"].tolist() == ["a", None, "c", "d", "e"]
    datasource.execute(f"UPDATE {table} SET s = 'changed' WHERE x = 0")
    third = cache.read(datasource, select)
    assert len(calls) == 2
    assert third["s"][0] == "changed"


@pytest.mark.parametrize(
    "select",
    ["SELECT x, RANDOM() AS r FROM {t}", "SELECT 1 AS one", "SELECT x FROM {t} WHERE x <"],
)
def test_uncacheable_selects_read_the_database(datasource, table, tmp_path, monkeypatch, select):
    cache = InputCache(tmp_path / "cache")
    calls = reads_counted(datasource, monkeypatch)
    monkeypatch.setattr(datasource, "read", lambda s, reporter=None: calls.append(s) or {})
    for _ in range(2):
        cache.read(datasource, select.format(t=table))
    assert len(calls) == 2
    assert not list((tmp_path / "cache").glob("*.npz"))


def test_size_limit_evicts_the_least_recently_used(datasource, table, tmp_path):
    cache = InputCache(tmp_path / "cache", max_bytes=1)  # keeps only the newest entry
    cache.read(datasource, f"SELECT x FROM {table}")
    cache.read(datasource, f"SELECT s FROM {table}")
    assert len(list((tmp_path / "cache").glob("*.npz"))) <= 1


def test_environment_switch(monkeypatch, tmp_path):
    monkeypatch.setenv("SQLML_CACHE", "off")
    assert InputCache.from_environment() is None
    monkeypatch.setenv("SQLML_CACHE", "on")
    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SQLML_CACHE_MAX_BYTES", "1000")
    cache = InputCache.from_environment()
    assert (cache.folder, cache.max_bytes) == (tmp_path, 1000)


def test_mysql_fingerprints_tables_by_their_update_time(mysql_url, unique_name, monkeypatch):
    """A table written a moment ago is fingerprinted once its update time's second is over,
    so the fingerprint asked at once and the one asked later are the same."""
    from sqlml.datasources import connect
    from sqlml.datasources.mysql import source as mysql

    ds = connect(mysql_url)
    try:
        ds.write_table([unique_name], {"x": np.arange(3, dtype=np.int64)})
        fresh = ds.table_fingerprint([unique_name])
        assert "created" in fresh and "x bigint" in fresh
        time.sleep(1.1)
        assert ds.table_fingerprint([unique_name]) == fresh
        ds.execute(f"UPDATE {unique_name} SET x = x + 1 WHERE x = 0")
        changed = ds.table_fingerprint([unique_name])
        assert "created" in changed and changed != fresh
        ds.execute(f"UPDATE {unique_name} SET x = x + 1 WHERE x = 1")
        monkeypatch.setattr(mysql, "SETTLE_SECONDS", 0.0)  # as if written to without a pause
        assert "created" not in ds.table_fingerprint([unique_name])  # the checksum
    finally:
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        ds.close()


RENAME = "ALTER TABLE {t} RENAME COLUMN {old} TO {new}"
TO_TEXT = {
    "duckdb": "ALTER TABLE {t} ALTER COLUMN b TYPE VARCHAR",
    "postgres": "ALTER TABLE {t} ALTER COLUMN b TYPE TEXT",
    "mysql": "ALTER TABLE {t} MODIFY b TEXT",
}


def swap_columns(ds, table: str, first: str, second: str) -> None:
    """Swap two columns' names: the same rows, the values under the other name."""
    for old, new in ((first, "swapping"), (second, first), ("swapping", second)):
        ds.execute(RENAME.format(t=table, old=old, new=new))


@pytest.mark.parametrize("change", ["swapped names", "a new type"])
def test_a_changed_schema_with_the_same_rows_is_read_again(
    datasource, unique_name, tmp_path, monkeypatch, change
):
    """The fingerprint covers the columns' names, types and order, not only the rows (DuckDB's
    and PostgreSQL's row hashes are blind to names, and PostgreSQL's to 10 becoming '10')."""
    if change == "a new type" and datasource.dialect == "sqlite":
        pytest.skip("SQLite cannot change a column's type")
    datasource.write_table([unique_name], {"a": np.array([1, 2, 3]), "b": np.array([10, 20, 30])})
    try:
        cache = InputCache(tmp_path / "cache")
        calls = reads_counted(datasource, monkeypatch)
        select = f"SELECT * FROM {unique_name}"
        first = cache.read(datasource, select)
        assert cache.read(datasource, select)["b"].tolist() == first["b"].tolist() == [10, 20, 30]
        assert len(calls) == 1
        if change == "swapped names":
            swap_columns(datasource, unique_name, "a", "b")
        else:
            datasource.execute(TO_TEXT[datasource.dialect].format(t=unique_name))
        second = cache.read(datasource, select)
        assert len(calls) == 2
        if change == "swapped names":
            assert sorted(second["a"].tolist()) == [10, 20, 30]
            assert sorted(second["b"].tolist()) == [1, 2, 3]
        else:
            assert sorted(second["b"].tolist()) == ["10", "20", "30"]
        assert len(list((tmp_path / "cache").glob("*.npz"))) == 2
    finally:
        datasource.execute(f"DROP TABLE IF EXISTS {unique_name}")


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
def test_training_after_swapping_columns_learns_the_new_columns(
    kind, tmp_path, unique_name, monkeypatch, capsys
):
    """y = 2x, then the names swapped (y = x / 2): the second model predicts from the new
    columns, not from the cached old ones."""
    url = datasource_url(kind, tmp_path)
    folder = tmp_path / "cache"
    monkeypatch.setenv("SQLML_CACHE_DIR", str(folder))
    data, probe, model = (f"{unique_name}_{part}" for part in ("d", "p", "m"))
    outs = [f"{unique_name}_o1", f"{unique_name}_o2"]
    ds = connect(url)
    ds.write_table([data], {"x": np.arange(100.0), "y": 2 * np.arange(100.0)})
    ds.write_table([probe], {"x": np.array([50.0])})
    try:
        predictions = []
        for swap, out in enumerate(outs):
            if swap:
                swap_columns(ds, data, "x", "y")
            program = (
                f"SELECT x, y FROM {data} TO TRAIN xgboost.gbtree WITH "
                f"train.num_boost_round = 60, validation.split = 0 LABEL y INTO {model};\n"
                f"SELECT x FROM {probe} TO PREDICT {out}.y USING {model};\n"
                f"SELECT y FROM {out};"
            )
            status = main(["-e", program, "--datasource", url, "--format", "csv"])
            out_text, err = capsys.readouterr()
            assert status == 0, err
            predictions.append(float(out_text.split()[-1]))
            assert len(list(folder.glob("*.npz"))) == 1 + swap  # the second read missed
        assert abs(predictions[0] - 100) < 5 and abs(predictions[1] - 25) < 5, predictions
    finally:
        for table in (data, probe, *outs):
            ds.execute(f"DROP TABLE IF EXISTS {table}")
        ModelStore(ds).drop(model)
        ds.close()


@pytest.fixture
def warnings_again(monkeypatch):
    """Warnings of sqlml's local files print once per process: again in each test."""
    monkeypatch.setattr(local_files, "_warned", set())


def test_an_entry_that_cannot_be_written_is_skipped_with_one_warning(
    duckdb_url, tmp_path, monkeypatch, capsys, warnings_again
):
    """A full disk half way through an entry: the data read is returned, one warning, and no
    temporary file is left (the cache used to fail the statement and leak its .tmp file)."""
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE t AS SELECT i AS x FROM range(1000) r(i)")
    saving = np.savez

    def disk_full(file, **arrays):
        file.write(b"PK" * 100)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache_module.np, "savez", disk_full)
    cache = InputCache(tmp_path / "cache")
    try:
        for select in ("SELECT x FROM t", "SELECT x + 1 AS y FROM t"):
            assert cache.read(ds, select) and len(cache.read(ds, select)) == 1
        assert cache.read(ds, "SELECT x FROM t")["x"].tolist() == list(range(1000))
        err = capsys.readouterr().err
        assert err.count("sqlml: warning:") == 1, err
        assert "input cache" in err and "No space left on device" in err
        assert "Traceback" not in err
        assert list((tmp_path / "cache").iterdir()) == []
        monkeypatch.setattr(cache_module.np, "savez", saving)  # space again: cached as before
        cache.read(ds, "SELECT x FROM t")
        assert len(list((tmp_path / "cache").glob("*.npz"))) == 1
    finally:
        ds.close()


def test_an_unwritable_cache_folder_costs_a_warning(
    duckdb_url, tmp_path, monkeypatch, capsys, warnings_again
):
    """A cache folder that cannot be created (under a file: even root cannot)."""
    (tmp_path / "file").write_text("")
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE t AS SELECT 1 AS x")
    try:
        cache = InputCache(tmp_path / "file" / "cache")
        assert cache.read(ds, "SELECT x FROM t")["x"].tolist() == [1]
        assert cache.read(ds, "SELECT x FROM t")["x"].tolist() == [1]
    finally:
        ds.close()
    err = capsys.readouterr().err
    assert err.count("sqlml: warning:") == 1 and "Not a directory" in err, err


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "flipped byte"])
def test_a_damaged_entry_is_a_miss_and_is_replaced(
    duckdb_url, tmp_path, monkeypatch, capsys, damage
):
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE t AS SELECT i AS x, 'v' || i AS s FROM range(100) r(i)")
    try:
        cache = InputCache(tmp_path / "cache")
        calls = reads_counted(ds, monkeypatch)
        select = "SELECT x, s FROM t ORDER BY x"
        cache.read(ds, select)
        (entry,) = (tmp_path / "cache").glob("*.npz")
        data = entry.read_bytes()
        entry.write_bytes(
            {
                "truncated": data[: len(data) // 2],
                "garbage": b"not a zip file at all",
                "empty": b"",
                "flipped byte": data[:200] + bytes([data[200] ^ 0xFF]) + data[201:],
            }[damage]
        )
        columns = cache.read(ds, select)
        assert len(calls) == 2  # read again from the database
        assert columns["x"].tolist() == list(range(100)) and columns["s"][99] == "v99"
        assert entry.read_bytes() == data  # replaced by a whole entry
        assert cache.read(ds, select)["s"][5] == "v5" and len(calls) == 2
    finally:
        ds.close()
    assert "Traceback" not in capsys.readouterr().err


def test_eviction_removes_stale_temporary_files(duckdb_url, tmp_path):
    """Killed writers leave .tmp files: the ones untouched for minutes go at the next write,
    a fresh one (maybe being written by another process) stays."""
    folder = tmp_path / "cache"
    folder.mkdir()
    stale, fresh = folder / "tmpold.tmp", folder / "tmpnew.tmp"
    for file in (stale, fresh):
        file.write_bytes(b"x" * 1000)
    old = time.time() - cache_module.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE t AS SELECT 1 AS x")
    try:
        InputCache(folder).read(ds, "SELECT x FROM t")
    finally:
        ds.close()
    assert sorted(p.suffix for p in folder.iterdir()) == [".npz", ".tmp"]
    assert fresh.exists() and not stale.exists()


@pytest.mark.parametrize("kind", ["duckdb", "mysql", "postgresql"])
def test_a_mixed_case_table_is_fingerprinted_under_its_lower_cased_name(kind, tmp_path):
    """The dependency analysis (run memoisation) names tables lower-cased: the fingerprint
    finds the table as stored, so a change to it is noticed."""
    from sqlml.datasources import connect

    ds = connect(datasource_url(kind, tmp_path))
    name = f"MixedCase_{uuid.uuid4().hex[:8]}"
    try:
        ds.execute(f"CREATE TABLE {ds.quote([name])} (x INTEGER)")
        ds.execute(f"INSERT INTO {ds.quote([name])} VALUES (1)")
        before = ds.table_fingerprint([name.lower()])
        assert before is not None
        ds.execute(f"INSERT INTO {ds.quote([name])} VALUES (2)")
        if kind == "mysql":
            time.sleep(1.1)  # update times have whole seconds
        assert ds.table_fingerprint([name.lower()]) not in (None, before)
    finally:
        ds.execute(f"DROP TABLE IF EXISTS {ds.quote([name])}")
        ds.close()


def _read_twice_through_the_environment(duckdb_url) -> list[list[int]]:
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE t AS SELECT 1 AS x")
    try:
        return [cache_module.cached_read(ds, "SELECT x FROM t")["x"].tolist() for _ in range(2)]
    finally:
        ds.close()


@pytest.mark.parametrize("home", ["unset", "empty", "relative", "missing"])
def test_a_user_without_a_home_folder_reads_without_the_cache(
    duckdb_url, tmp_path, monkeypatch, capsys, warnings_again, home
):
    """A pod run as --run-as-user 1234: no $HOME and no password entry for the uid (where
    Path.home() raises), or a $HOME that is no folder. One warning, the statement's data
    read from the database, nothing created anywhere (not in the working folder either)."""
    import pwd

    monkeypatch.delenv("SQLML_CACHE_DIR", raising=False)
    monkeypatch.setenv("SQLML_CACHE", "on")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    if home == "unset":
        monkeypatch.delenv("HOME")

        def unknown(uid):
            raise KeyError(f"getpwuid(): uid not found: {uid}")

        monkeypatch.setattr(pwd, "getpwuid", unknown)
        with pytest.raises(RuntimeError):  # what sqlml must not let through
            Path.home()
    else:
        value = {"empty": "", "relative": "home", "missing": str(tmp_path / "gone")}[home]
        monkeypatch.setenv("HOME", value)
    assert _read_twice_through_the_environment(duckdb_url) == [[1], [1]]
    err = capsys.readouterr().err
    assert err.count("sqlml: warning:") == 1, err
    assert "the input cache is off" in err and "SQLML_CACHE_DIR" in err
    assert "Traceback" not in err
    assert list(work.iterdir()) == [] and not (tmp_path / "gone").exists()


@pytest.mark.parametrize("home", ["/proc", "read-only"])
def test_a_home_folder_where_nothing_can_be_created_costs_one_warning(
    duckdb_url, tmp_path, monkeypatch, capsys, warnings_again, home
):
    """$HOME read-only: /proc (read-only even for root), or a folder without write
    permission (as / is for a user other than root)."""
    if home == "/proc" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    if home == "read-only":
        home = str(tmp_path / "home")
        Path(home).mkdir(mode=0o555)
        if os.access(home, os.W_OK):  # root writes anywhere: /proc covers it
            pytest.skip("this user may write to read-only folders")
    monkeypatch.delenv("SQLML_CACHE_DIR", raising=False)
    monkeypatch.setenv("SQLML_CACHE", "on")
    monkeypatch.setenv("HOME", home)
    assert _read_twice_through_the_environment(duckdb_url) == [[1], [1]]
    err = capsys.readouterr().err
    assert err.count("sqlml: warning:") == 1, err
    assert f"the input cache in {home}/.cache/sqlml cannot be created" in err
    assert "Traceback" not in err
    assert not Path(home, ".cache").exists()


def test_a_size_limit_that_is_no_number_is_a_warning(monkeypatch, tmp_path, capsys, warnings_again):
    monkeypatch.setenv("SQLML_CACHE", "on")
    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SQLML_CACHE_MAX_BYTES", "2GB")
    assert InputCache.from_environment().max_bytes == cache_module.DEFAULT_MAX_BYTES
    assert "SQLML_CACHE_MAX_BYTES='2GB' is not a number of bytes" in capsys.readouterr().err
