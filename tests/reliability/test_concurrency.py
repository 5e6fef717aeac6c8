"""Two `sqlml` processes training into one model, or predicting into one table, at the same
time. On the servers (MySQL, PostgreSQL) both succeed and the result is whole: two complete
model versions numbered one after the other, or the table as one of the two runs wrote it,
never a mix. A DuckDB file opens read-write in one process at a time: the second run stops
with a clear error and the first one's result is whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import datasource_url
from fault_support import (
    Child,
    drop,
    model_versions,
    predict_sql,
    release,
    rows,
    run,
    table_rows,
    train_sql,
    write,
)

from sqlml.datasources import connect

# Runs sqlml; before saving the model or writing the table it says "ready" and waits until
# the file "go" exists in the given folder, so that two children save or write together.
CHILD = """
import pathlib, sys, time
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

url, program, folder = sys.argv[1:4]

def waiting(method):
    def wait_then(self, *args):
        print("ready", flush=True)
        deadline = time.monotonic() + 600  # past the test's own wait: it fails first
        while not (pathlib.Path(folder) / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return method(self, *args)
    return wait_then

probe = connect(url)
source = type(probe)
probe.close()
source.write_batches = waiting(source.write_batches)
ModelStore.save = waiting(ModelStore.save)
sys.exit(main(["run", program, "--datasource", url]))
"""


def start(url: str, folder: Path, text: str, name: str) -> Child:
    program = folder / f"{name}.sql"
    program.write_text(text)
    return Child(CHILD, url, str(program), str(folder))


def together(url: str, folder: Path, first: str, second: str) -> list[tuple[int, str]]:
    """Run both programs in two processes that save or write at the same moment."""
    children = [start(url, folder, first, "first"), start(url, folder, second, "second")]
    try:
        for child in children:
            child.wait_for("ready")
        release(folder, "go")
        return [child.finish() for child in children]
    finally:
        for child in children:
            child.kill()


def made(url: str, unique_name: str, ids: int) -> tuple[str, str]:
    a, b = f"{unique_name}_a", f"{unique_name}_b"
    write(url, a, rows(ids, seed=1))
    write(url, b, rows(ids, seed=2, first_id=ids))
    return a, b


@pytest.mark.parametrize("kind", ["mysql", "postgresql"])
def test_two_trainings_into_one_model_save_two_whole_versions(kind, tmp_path, unique_name):
    url = datasource_url(kind, tmp_path)
    a, b = made(url, unique_name, 1_000)
    model = f"{unique_name}_m"
    try:
        ends = together(url, tmp_path, train_sql(a, model, 6), train_sql(b, model, 9))
        assert [status for status, _ in ends] == [0, 0], ends
        versions = model_versions(url, model)  # each whole, with its own rounds
        assert sorted(versions) == [1, 2]
        assert sorted(versions.values()) == [6, 9]
    finally:
        drop(url, [a, b], [model])


@pytest.mark.parametrize("kind", ["mysql", "postgresql"])
def test_two_predictions_into_one_table_leave_one_of_them(kind, tmp_path, unique_name, capsys):
    url = datasource_url(kind, tmp_path)
    a, b = made(url, unique_name, 1_000)
    model, out = f"{unique_name}_m", f"{unique_name}_out"
    expected = {tag: f"{unique_name}_e{tag}" for tag in (1, 2)}
    try:
        sequential = train_sql(a, model, 5) + predict_sql(a, expected[1], model, 1)
        status, err = run(["-e", sequential + predict_sql(b, expected[2], model, 2),
                           "--datasource", url], capsys)  # fmt: skip
        assert status == 0, err
        ends = together(url, tmp_path, predict_sql(a, out, model, 1), predict_sql(b, out, model, 2))
        assert [status for status, _ in ends] == [0, 0], ends
        written = table_rows(url, out)
        assert written in (table_rows(url, expected[1]), table_rows(url, expected[2]))
        assert len(written) == 1_000
    finally:
        drop(url, [a, b, out, *expected.values()], [model])


@pytest.mark.parametrize("statement", ["train", "predict"])
def test_a_second_run_on_a_duckdb_file_in_use_stops_with_a_clear_error(
    statement, tmp_path, unique_name, capsys
):
    url = datasource_url("duckdb", tmp_path)
    a, b = made(url, unique_name, 500)
    model, out = f"{unique_name}_m", f"{unique_name}_out"
    status, err = run(["-e", train_sql(a, model, 5), "--datasource", url], capsys)
    assert status == 0, err
    if statement == "train":
        first, second = train_sql(a, model, 6), train_sql(b, model, 9)
    else:
        first, second = predict_sql(a, out, model, 1), predict_sql(b, out, model, 2)
    (tmp_path / "second.sql").write_text(second)
    holder = start(url, tmp_path, first, "first")
    try:
        holder.wait_for("ready")  # the first run has the file open, and waits
        status, err = run(["run", str(tmp_path / "second.sql"), "--datasource", url], capsys)
    finally:
        release(tmp_path, "go")
        ended = holder.finish()
        holder.kill()
    assert status == 1
    assert "error: cannot open the DuckDB database" in err and "another process has it open" in err
    assert "hint: another process has had the file open for over 2 s: run again once it" in err
    assert ended[0] == 0, ended
    if statement == "train":
        assert model_versions(url, model) == {1: 5, 2: 6}
    else:
        written = table_rows(url, out)
        assert len(written) == 500 and {row[1] for row in written} == {1}


# Like CHILD, but both children wait before their first CREATE TABLE IF NOT EXISTS of sqlml's
# tables (the run record's, at the start of the run), in a database that has none yet.
FIRST_USE = """
import pathlib, sys, time
from sqlml.cli import main
from sqlml.datasources import base
from sqlml.datasources.postgresql import source as postgresql

url, program, folder = sys.argv[1:4]
waited = []

def together(create):
    def create_together(self, statements):
        if not waited:
            waited.append(True)
            print("ready", flush=True)
            deadline = time.monotonic() + 600  # past the test's own wait: it fails first
            while not (pathlib.Path(folder) / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.005)
        return create(self, statements)
    return create_together

for source in (base.Datasource, postgresql.PostgreSQLSource):  # PostgreSQL's, under its lock
    source.create_tables = together(source.create_tables)
sys.exit(main(["run", program, "--datasource", url]))
"""


@pytest.fixture(params=["mysql", "postgresql"])
def fresh_database(request, tmp_path, unique_name):
    """The URL of a database made for the test, without any of sqlml's tables."""
    server = datasource_url(request.param, tmp_path)
    admin = connect(server)
    try:
        admin.execute(f"CREATE DATABASE {unique_name}")
        yield server.rsplit("/", 1)[0] + f"/{unique_name}"
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {unique_name}")
        admin.close()


def test_two_first_runs_on_a_fresh_database_both_succeed(fresh_database, tmp_path):
    url = fresh_database
    write(url, "d", rows(500, seed=1))
    programs = [train_sql("d", "m", 5) + predict_sql("d", f"p{i}", "m", i) for i in (1, 2)]
    children = []
    for i, text in enumerate(programs):
        program = tmp_path / f"run{i}.sql"
        program.write_text(text)
        children.append(Child(FIRST_USE, url, str(program), str(tmp_path)))
    try:
        for child in children:
            child.wait_for("ready")
        release(tmp_path, "go")
        ends = [child.finish() for child in children]
    finally:
        for child in children:
            child.kill()
    assert [status for status, _ in ends] == [0, 0], ends
    assert sorted(model_versions(url, "m").values()) == [5, 5]
    assert len(table_rows(url, "p1")) == len(table_rows(url, "p2")) == 500
