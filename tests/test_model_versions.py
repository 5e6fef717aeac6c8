"""Model versions named in the language: ``<model> VERSION <n | alias>`` wherever a model is
named, ALTER MODEL's aliases, promotion, rollback and retention, SHOW MODEL VERSIONS and
``sqlml export --version``, on the four databases.

The versions of ``m`` here are regressors trained on a constant label: version ``k`` learned
``y = k`` and predicts ``k`` for every row, so a prediction tells which version made it.
"""

from __future__ import annotations

import csv
import getpass
import json
import re
import socket
import threading
from pathlib import Path

import pytest
from conftest import KINDS, datasource_url, fetch_rows

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.grammar import parse
from sqlml.models.store import KEEP_VERSIONS, ModelStore
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

ROWS = 40


def training(model: str, table: str, k: int, into: str | None = None) -> str:
    """A TO TRAIN of the version that predicts ``k``."""
    return (
        f"SELECT x, {k}.0 AS y FROM {table} TO TRAIN xgboost.gbtree WITH "
        f"objective = 'reg:squarederror', train.num_boost_round = 2, validation.split = 0 "
        f"LABEL y INTO {into or model};"
    )


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def ok(url: str, program: str, capsys) -> tuple[str, str]:
    status, out, err = run(url, program, capsys)
    assert status == 0, err
    return out, err


@pytest.fixture(params=KINDS)
def versions(request, tmp_path, unique_name, capsys):
    """A table of ``ROWS`` rows and model ``m`` in versions 1, 2 and 3 on each database; the
    URL, model and table. Dropped afterwards."""
    url = datasource_url(request.param, tmp_path)
    table, model = f"{unique_name}_t", f"{unique_name}_m"
    ds = connect(url)
    ds.execute(f"CREATE TABLE {table} (x DOUBLE PRECISION)")
    ds.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({i})" for i in range(ROWS)))
    ds.close()
    ok(url, "".join(training(model, table, k) for k in (1, 2, 3)), capsys)
    yield url, model, table
    ds = connect(url)
    ModelStore(ds).drop(model)
    ds.close()
    main(["-e", f"DROP TABLE IF EXISTS {table};", "--datasource", url])


def predicted(url: str, table: str) -> set[float]:
    return {round(float(y), 3) for (y,) in fetch_rows(url, f"SELECT y FROM {table}")}


def test_every_statement_names_a_version_by_number_or_alias(versions, tmp_path, capsys):
    url, m, t = versions
    p1, p2, p3, ev, ex = (f"{t}_{s}" for s in ("p1", "p2", "p3", "ev", "ex"))
    out, err = ok(
        url,
        f"ALTER MODEL {m} SET ALIAS champion TO VERSION 2;"
        f"SELECT x FROM {t} TO PREDICT {p1}.y USING {m} VERSION 1;"
        f"SELECT x FROM {t} TO PREDICT {p2}.y USING {m} VERSION champion;"
        f"SELECT x FROM {t} TO PREDICT {p3}.y USING {m};"
        f"SELECT x, 1.0 AS y FROM {t} TO EVALUATE {m} VERSION 1 WITH validation.metrics = 'mae' "
        f"LABEL y INTO {ev};"
        f"SELECT x FROM {t} TO EXPLAIN {m} VERSION champion INTO {ex};"
        f"SELECT MIN(PREDICT({m} VERSION champion)), MAX(PREDICT({m} VERSION 1)) FROM {t};",
        capsys,
    )
    assert "set alias champion of model" in err and "to version 2 (new)" in err
    assert (predicted(url, p1), predicted(url, p2), predicted(url, p3)) == ({1.0}, {2.0}, {3.0})
    assert fetch_rows(url, f"SELECT mae FROM {ev}")[0][0] < 1e-3
    assert fetch_rows(url, f"SELECT * FROM {ex}") == [("x", 0.0)]  # a constant: no attribution
    low, high = (float(v) for v in out.splitlines()[-1].split(","))
    assert (round(low, 3), round(high, 3)) == (2.0, 1.0)

    out, _ = ok(url, f"DESCRIBE MODEL {m} VERSION champion;", capsys)
    described = dict(line.split(",", 1) for line in out.splitlines()[1:])
    assert (described["version"], described["aliases"]) == ("2", "champion")
    out, _ = ok(url, f"SHOW TRAIN {m} VERSION 1;", capsys)
    assert "1.0 AS y" in out and "2.0 AS y" not in out

    exported = tmp_path / "m.ubj"
    assert main(["export", m, str(exported), "--datasource", url, "--version", "champion"]) == 0
    said = capsys.readouterr().out
    assert f"exported model {m} version 2 to {exported}" in said
    metadata = re.search(r"\(metadata: (.+)\)", said).group(1)
    assert json.loads(Path(metadata).read_text())["version"] == 2

    ok(url, f"SELECT x, 5.0 AS y FROM {t} TO TRAIN xgboost.gbtree WITH "
       f"objective = 'reg:squarederror', train.num_boost_round = 2, validation.split = 0 "
       f"LABEL y USING {m} VERSION 1 INTO {m}_continued;", capsys)  # fmt: skip
    ds = connect(url)
    base = ModelStore(ds).load(f"{m}_continued", check=False).metadata["base_model"]
    ModelStore(ds).drop(f"{m}_continued")
    for table in (p1, p2, p3, ev, ex):
        ds.execute(f"DROP TABLE {table}")
    ds.close()
    assert base == {"name": m, "version": 1}


def test_promote_and_roll_back(versions, capsys):
    url, m, t = versions
    _, err = ok(
        url,
        f"ALTER MODEL {m} SET ALIAS champion TO VERSION 2;"
        f"ALTER MODEL {m} SET ALIAS challenger TO VERSION 3;"
        f"ALTER MODEL {m} PROMOTE VERSION challenger;",
        capsys,
    )
    assert f"promoted version 3 of model {m} to champion (was version 2)" in err
    query = f"SELECT MIN(PREDICT({m} VERSION champion)) FROM {t};"
    assert round(float(ok(url, query, capsys)[0].splitlines()[-1]), 3) == 3.0

    _, err = ok(url, f"ALTER MODEL {m} ROLLBACK ALIAS champion;", capsys)
    assert f"rolled back alias champion of model {m} to version 2 (from version 3)" in err
    assert round(float(ok(url, query, capsys)[0].splitlines()[-1]), 3) == 2.0
    _, err = ok(url, f"ALTER MODEL {m} ROLLBACK ALIAS champion;", capsys)  # undoes the rollback
    assert "to version 3 (from version 2)" in err

    out, _ = ok(url, f"SHOW MODEL VERSIONS {m};", capsys)
    header, *rows = csv.reader(out.splitlines())
    assert header == ["model", "version", "aliases", "estimator", "metrics", "rows",
                      "created_by", "trained_at"]  # fmt: skip
    assert [row[1:3] for row in rows] == [["1", ""], ["2", ""], ["3", "challenger, champion"]]
    assert {row[6] for row in rows} == {f"{getpass.getuser()}@{socket.gethostname()}"}
    assert all(row[4].startswith("train_rmse ") for row in rows), rows

    _, err = ok(url, f"ALTER MODEL {m} DROP ALIAS challenger;", capsys)
    assert f"dropped alias challenger of model {m} (version 3)" in err
    status, _, err = run(url, f"SELECT x FROM {t} TO PREDICT {t}_p.y USING {m} VERSION challenger;",
                         capsys)  # fmt: skip
    assert status == 1
    assert f"model {m} has no alias challenger" in err
    assert "its aliases are: champion (version 3)" in err
    ok(url, f"ALTER MODEL {m} SET ALIAS fresh TO VERSION 1;", capsys)
    status, _, err = run(url, f"ALTER MODEL {m} ROLLBACK ALIAS fresh;", capsys)
    assert status == 1 and "has not moved since it was set (to version 1)" in err
    status, _, err = run(url, f"ALTER MODEL {m} SET ALIAS later TO VERSION 9;", capsys)
    assert status == 1 and f"model {m} has no version 9" in err
    assert "its stored versions are 1, 2, 3" in err


def test_retention_never_deletes_an_aliased_version(versions, capsys):
    url, m, t = versions
    ok(url, f"ALTER MODEL {m} SET ALIAS champion TO VERSION 1;", capsys)
    ok(url, training(m, t, 4) + training(m, t, 5), capsys)
    ds = connect(url)
    store = ModelStore(ds)
    assert KEEP_VERSIONS == 3
    assert store.list_versions(m) == [1, 3, 4, 5]  # the newest three, and the champion

    _, err = ok(url, f"ALTER MODEL {m} KEEP 1 VERSIONS;", capsys)
    assert (
        f"model {m} keeps its newest version and those aliases name; deleted versions 3, 4" in err
    )
    assert store.list_versions(m) == [1, 5]
    ok(url, f"ALTER MODEL {m} PROMOTE VERSION 5;" + training(m, t, 6), capsys)
    assert store.list_versions(m) == [1, 5, 6]  # 1: where champion was, which rollback restores
    ok(url, f"ALTER MODEL {m} ROLLBACK ALIAS champion;", capsys)
    assert store.load(m, "champion").version == 1

    _, err = ok(url, f"ALTER MODEL {m} KEEP ALL VERSIONS;" + training(m, t, 7), capsys)
    assert f"model {m} keeps all its versions" in err
    assert store.list_versions(m) == [1, 5, 6, 7]
    assert store.retention(m) is None

    ok(url, f"DROP MODEL {m};", capsys)
    assert (store.list_versions(m), store.aliases(m), store.retention(m)) == ([], {}, 3)
    ds.close()


def test_a_concurrent_predict_sees_one_version_or_the_other(versions, capsys):
    """Promotions and rollbacks on one connection while another runs PREDICT(m VERSION
    champion): every query succeeds with the old version's or the new one's predictions."""
    url, m, t = versions
    ok(url, f"ALTER MODEL {m} SET ALIAS champion TO VERSION 2;", capsys)
    (query,) = analyze(parse(f"SELECT MIN(PREDICT({m} VERSION champion)), "
                             f"MAX(PREDICT({m} VERSION champion)) FROM {t}"))  # fmt: skip
    moves, seen, errors = 12, [], []
    done = threading.Event()

    def move() -> None:
        ds = connect(url)
        try:
            for i in range(moves):
                if i % 2 == 0:
                    ModelStore(ds).set_alias(m, "champion", 3)
                else:
                    ModelStore(ds).rollback_alias(m, "champion")
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            ds.close()
            done.set()

    reader = connect(url)
    mover = threading.Thread(target=move)
    mover.start()
    while not done.is_set() or len(seen) < 3:
        row = execute(query, reader).result.rows[0]
        seen.append(tuple(round(float(v), 3) for v in row))
    mover.join()
    last = execute(query, reader).result.rows[0]
    reader.close()
    assert not errors, errors
    assert set(seen) <= {(2.0, 2.0), (3.0, 3.0)}, seen
    assert [round(float(v), 3) for v in last] == [2.0, 2.0]  # an even number of moves


def test_version_syntax_errors_are_located(duckdb_url, capsys):
    cases = {
        "SELECT * FROM t TO PREDICT p.y USING m VERSION 1.5;": (
            "1:48", "a model version is a positive whole number or an alias, got 1.5"),
        "SELECT * FROM t TO PREDICT p.y USING m VERSION 0;": (
            "1:48", "a model version is a positive whole number or an alias, got 0"),
        "ALTER MODEL m KEEP 0 VERSIONS;": (
            "1:20", "KEEP takes a positive whole number of versions, got 0"),
        'ALTER MODEL m SET ALIAS "7" TO VERSION 1;': (
            "1:25", 'the alias "7" is a number, which VERSION would read as a version number'),
        "ALTER MODEL m RENAME TO n;": (
            "1:15", "unexpected 'RENAME'; expected '.', DROP, KEEP, PROMOTE, ROLLBACK or SET"),
        "SELECT PREDICT(m VERSION 'x') FROM t;": (
            "1:26", "PREDICT takes a model's name"),
    }  # fmt: skip
    for program, (where, message) in cases.items():
        status, _, err = run(duckdb_url, program, capsys)
        assert status == 1 and f"<-e>:{where}: error: {message}" in err, (program, err)


def test_a_missing_version_is_reported_by_check(versions, tmp_path, capsys):
    url, m, t = versions
    program = tmp_path / "p.sql"
    program.write_text(f"SELECT x FROM {t}\nTO PREDICT {t}_p.y USING {m} VERSION champion;\n")
    assert main(["check", str(program), "--datasource", url]) == 1
    err = capsys.readouterr().err
    assert "p.sql:2:" in err and f"model {m} has no alias champion" in err


def test_store_refuses_an_unknown_model_with_its_hint(datasource):
    with pytest.raises(ModelError, match="model nowhere does not exist"):
        ModelStore(datasource).set_alias("nowhere", "champion", 1)
