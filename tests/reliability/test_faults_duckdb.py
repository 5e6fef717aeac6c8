"""Faults of an embedded DuckDB database, which has no connection to drop: reads that fail
half way (as a disk error would) are injected at the datasource's boundary. The model keeps
its previous version, the run record shows the failed step, and the resumed run completes.
(A write failing half way is tested in tests/test_write_path.py, a save losing its
connection in tests/test_training_faults.py, killed processes in test_faults_kill.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_support import (
    model_versions,
    predict_sql,
    rows,
    run,
    run_id,
    step_records,
    table_rows,
    train_sql,
    write,
)

from sqlml.datasources.duckdb.source import DuckDBSource
from sqlml.errors import DatasourceError


@pytest.mark.parametrize("external_memory", [False, True])
def test_a_read_failing_half_way_keeps_the_model_and_resumes(
    external_memory, duckdb_url, tmp_path: Path, monkeypatch, capsys
):
    """With train.external_memory the rows stream in batches and the second batch fails;
    otherwise the whole read fails once the query ran."""
    monkeypatch.setenv("SQLML_CACHE", "off")
    write(duckdb_url, "train", rows(3_000, seed=1))
    write(duckdb_url, "test", rows(500, seed=2))
    status, err = run(["-e", train_sql("train", "m", 5), "--datasource", duckdb_url], capsys)
    assert status == 0, err
    program = tmp_path / "program.sql"
    text = train_sql("train", "m", 8) + predict_sql("test", "p", "m", 2)
    if external_memory:
        text = text.replace("WITH ", "WITH train.external_memory = true, ", 1)
    program.write_text(text)
    read, read_batches = DuckDBSource.read, DuckDBSource.read_batches

    def failing_read(self, select, reporter=None):
        read(self, select, reporter)
        raise DatasourceError("DuckDB: IO Error: could not read block (injected)")

    def failing_batches(self, select, batch_rows=1_000):
        for index, batch in enumerate(read_batches(self, select, 1_000)):
            if index == 1:
                raise DatasourceError("DuckDB: IO Error: could not read block (injected)")
            yield batch

    with monkeypatch.context() as patch:
        patch.setattr(DuckDBSource, "read", failing_read)
        patch.setattr(DuckDBSource, "read_batches", failing_batches)
        status, err = run(["run", str(program), "--datasource", duckdb_url], capsys)
    assert status == 1
    assert "error: DuckDB: IO Error: could not read block (injected)" in err
    assert "Traceback" not in err
    failed = run_id(err)
    assert model_versions(duckdb_url, "m") == {1: 5}
    records = step_records(duckdb_url, failed)
    assert sorted(state for state, _, _ in records.values()) == ["failed", "omitted"]

    status, err = run(["run", str(program), "--datasource", duckdb_url, "--resume", failed], capsys)
    assert status == 0, err
    assert model_versions(duckdb_url, "m") == {1: 5, 2: 8}
    assert len(table_rows(duckdb_url, "p")) == 500
