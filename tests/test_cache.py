"""The input cache: hits while tables are unchanged, misses after a change, bounded size."""

from __future__ import annotations

import time

import numpy as np
import pytest

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

    def counting(select):
        calls.append(select)
        return original(select)

    monkeypatch.setattr(datasource, "read", counting)
    return calls


def test_hits_until_the_table_changes(datasource, table, tmp_path, monkeypatch):
    if datasource.dialect == "sqlite":
        pytest.skip("SQLite tables have no fingerprint: never cached")
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
    monkeypatch.setattr(datasource, "read", lambda s: calls.append(s) or {})
    for _ in range(2):
        cache.read(datasource, select.format(t=table))
    assert len(calls) == 2
    assert not list((tmp_path / "cache").glob("*.npz"))


def test_size_limit_evicts_the_least_recently_used(datasource, table, tmp_path):
    if datasource.dialect == "sqlite":
        pytest.skip("SQLite tables have no fingerprint: never cached")
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
    from sqlml.runtime.datasource import connect, mysql

    ds = connect(mysql_url)
    try:
        ds.write_table([unique_name], {"x": np.arange(3, dtype=np.int64)})
        fresh = ds.table_fingerprint([unique_name])
        assert fresh.startswith("created") and "x bigint" in fresh
        time.sleep(1.1)
        assert ds.table_fingerprint([unique_name]) == fresh
        ds.execute(f"UPDATE {unique_name} SET x = x + 1 WHERE x = 0")
        changed = ds.table_fingerprint([unique_name])
        assert changed.startswith("created") and changed != fresh
        ds.execute(f"UPDATE {unique_name} SET x = x + 1 WHERE x = 1")
        monkeypatch.setattr(mysql, "SETTLE_SECONDS", 0.0)  # as if written to without a pause
        assert not ds.table_fingerprint([unique_name]).startswith("created")  # the checksum
    finally:
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        ds.close()
