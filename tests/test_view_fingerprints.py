"""Views on every database: the input cache and --resume see a change of what a view reads
(its base table, a view under it), as they see a change of a table."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sqlml.backends.local.record import RunRecord
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.runtime.cache import InputCache


@pytest.fixture
def views(datasource, unique_name):
    """A base table, a view of it and a view of that view (names: base, view, outer)."""
    base, view, outer = unique_name, f"{unique_name}_v", f"{unique_name}_w"
    datasource.write_table(
        [base], {"x": np.arange(4, dtype=np.int64), "y": np.array([0, 0, 1, 1], np.int64)}
    )
    datasource.execute(f"CREATE VIEW {view} AS SELECT x, y FROM {base} WHERE x >= 0")
    datasource.execute(f"CREATE VIEW {outer} AS SELECT x, y FROM {view}")
    yield base, view, outer
    for name in (outer, view):
        datasource.execute(f"DROP VIEW IF EXISTS {name}")
    datasource.execute(f"DROP TABLE IF EXISTS {base}")


@pytest.mark.parametrize("which", [1, 2], ids=["view", "view-of-a-view"])
def test_the_cache_reads_a_view_again_after_its_base_table_changed(
    datasource, views, tmp_path, monkeypatch, which
):
    base, name = views[0], views[which]
    cache = InputCache(tmp_path / "cache")
    reads: list[str] = []
    original = datasource.read
    monkeypatch.setattr(
        datasource, "read", lambda select, reporter=None: reads.append(select) or original(select)
    )
    select = f"SELECT x, y FROM {name} ORDER BY x"
    assert cache.read(datasource, select)["y"].tolist() == [0, 0, 1, 1]
    assert cache.read(datasource, select)["y"].tolist() == [0, 0, 1, 1]
    assert len(reads) == 1  # a view is cached while what it reads is unchanged
    datasource.execute(f"UPDATE {base} SET y = 1 - y")
    assert cache.read(datasource, select)["y"].tolist() == [1, 1, 0, 0]
    assert len(reads) == 2


def test_a_views_fingerprint_changes_with_its_rows_only(datasource, views):
    base, view, outer = views
    before = [datasource.table_fingerprint([name]) for name in (view, outer)]
    assert None not in before
    assert [datasource.table_fingerprint([name]) for name in (view, outer)] == before
    datasource.execute(f"UPDATE {base} SET y = 1 - y WHERE x = 0")
    after = [datasource.table_fingerprint([name]) for name in (view, outer)]
    assert after[0] != before[0] and after[1] != before[1]


def test_resume_runs_a_step_reading_a_view_again_after_its_base_table_changed(
    datasource, views, tmp_path, capsys
):
    base, _, outer = views
    url = datasource.url.with_password()
    file = tmp_path / "program.sql"
    file.write_text(f"SELECT sum(y) AS s FROM {outer};\n")

    def run(*options: str) -> tuple[str, str, str]:
        assert main(["run", str(file), "--datasource", url, "--format", "csv", *options]) == 0
        out, err = capsys.readouterr()
        return re.match(r"sqlml: run ([\w-]+)", err).group(1), out, err

    first, out, _ = run()
    assert out.split() == ["s", "2"]
    unchanged, _, err = run("--resume", first)
    assert "skipped: unchanged" in err
    datasource.execute(f"UPDATE {base} SET y = 1")
    resumed, out, _ = run("--resume", unchanged)
    assert out.split() == ["s", "4"]
    assert RunRecord(datasource).steps(resumed)["s1-select"].state == "succeeded"


def test_resume_runs_a_step_again_when_a_table_it_reads_has_no_fingerprint(
    duckdb_url, tmp_path, capsys, monkeypatch
):
    """A table the database cannot fingerprint may have changed: the step runs again, and
    the run says why."""
    from sqlml.datasources.duckdb.source import DuckDBSource

    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE a AS SELECT 1 AS x")
    ds.close()
    file = tmp_path / "program.sql"
    file.write_text("SELECT x FROM a;\n")
    options = ["--datasource", duckdb_url, "--format", "csv"]
    monkeypatch.setattr(DuckDBSource, "table_fingerprint", lambda self, table: None)
    assert main(["run", str(file), *options]) == 0
    first = re.match(r"sqlml: run ([\w-]+)", capsys.readouterr().err).group(1)
    assert main(["run", str(file), *options, "--resume", first]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["x", "1"]
    assert "step s1-select runs again: the database has no fingerprint of a" in err
