"""sqlml ui's model pages and a version's lineage: each version shows the plots drawn of it
and the TO EVALUATE metrics measured of it (no other version's), its lineage, and links to
the run and step that trained it, which link back."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fetch_rows, import_or_skip, load_iris

from sqlml.backends.local.run_file import read_run_file
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

import_or_skip("starlette")  # the ui extra
from starlette.testclient import TestClient  # noqa: E402

from sqlml.ui.server import Settings, create_app  # noqa: E402

PROGRAM = """\
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 2, max_depth = 1
LABEL class INTO m;
SELECT * FROM iris_test TO EVALUATE m WITH evaluate.plot = 'plots/v1.png' LABEL class INTO e1;
SELECT * FROM iris_test TO EXPLAIN m WITH explain.plot = 'plots/x1.png' INTO x1;
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 3, max_depth = 3
LABEL class INTO m;
SELECT * FROM iris_test TO EVALUATE m WITH evaluate.plot = 'plots/v2.png',
  validation.metrics = 'accuracy_score' LABEL class INTO e2;
"""


class Made:
    """Two versions of m, each evaluated (and the first explained) by one recorded run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.url = f"duckdb:///{folder / 'lineage.duckdb'}"
        self.run_dir = folder / "runs"
        self.run_id = ""

    def client(self) -> TestClient:
        settings = Settings(self.url, self.run_dir, self.folder)
        return TestClient(create_app(settings), base_url="http://127.0.0.1:8765")

    def rows(self, query: str) -> list[tuple]:
        return fetch_rows(self.url, query)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Made]:
    folder = tmp_path_factory.mktemp("ui-lineage")
    made = Made(folder)
    ds = connect(made.url)
    load_iris(ds)
    ds.close()
    (folder / "plots").mkdir()
    program = folder / "versions.sql"
    program.write_text(PROGRAM)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SQLML_RUN_DIR", str(made.run_dir))
        patch.chdir(folder)
        assert main(["run", "versions.sql", "--datasource", made.url, "--jobs", "1"]) == 0
    (made.run_id,) = [path.name for path in made.run_dir.iterdir()]
    yield made


def plots(html: str) -> list[str]:
    """The files of the plots a model's page shows, each checked to say the version shown."""
    (number,) = re.findall(r'<h1 id="model" data-model="m" data-version="(\d+)">', html)
    found = re.findall(
        r'<figure class="plot" data-kind="\w+">.*?<figcaption>TO \w+ of version (\d+),'
        r".*?<code>([^<]+)</code>",
        html,
        re.S,
    )
    assert all(version == number for version, _ in found), found
    return [path for _, path in found]


def evaluations(html: str) -> list[dict[str, str]]:
    """The TO EVALUATE metrics a model's page shows, one dict per evaluation."""
    found = re.findall(r'<table class="evaluation"[^>]*>(.*?)</table>', html, re.S)
    row = r'<tr data-metric="([^"]+)"><td>[^<]*</td><td class="value number">([^<]*)</td></tr>'
    return [dict(re.findall(row, table)) for table in found]


def test_each_version_shows_only_the_plots_drawn_of_it(made):
    client = made.client()
    first = client.get("/models/m?version=1")
    second = client.get("/models/m?version=2")
    assert first.status_code == second.status_code == 200
    assert sorted(plots(first.text)) == ["v1.png", "x1.png"]
    assert plots(second.text) == ["v2.png"]
    assert plots(client.get("/models/m").text) == ["v2.png"]  # the newest: version 2


def test_each_version_shows_only_the_evaluations_measured_of_it(made):
    client = made.client()
    (e1,) = made.rows("SELECT log_loss, accuracy FROM e1")
    (e2,) = made.rows("SELECT accuracy_score FROM e2")
    first = evaluations(client.get("/models/m?version=1").text)
    second = evaluations(client.get("/models/m?version=2").text)
    assert len(first) == len(second) == 1
    assert set(first[0]) == {"accuracy", "precision", "recall", "f1", "auc", "log_loss"}
    assert float(first[0]["log_loss"]) == pytest.approx(e1[0], rel=1e-5)
    assert float(first[0]["accuracy"]) == pytest.approx(e1[1], rel=1e-5)
    assert list(second[0]) == ["accuracy_score"]  # validation.metrics chose one
    assert float(second[0]["accuracy_score"]) == pytest.approx(e2[0], rel=1e-5)


def test_a_version_shows_its_lineage_and_links_to_its_run_and_step(made):
    client = made.client()
    ds = connect(made.url)
    try:
        lineage = ModelStore(ds).load("m", 1).metadata["lineage"]
    finally:
        ds.close()
    page = client.get("/models/m?version=1").text
    section = re.search(r'<table id="lineage">(.*?)</table>', page, re.S)
    assert section, page
    shown = dict(re.findall(r"<tr><th>([^<]+)</th><td>(.*?)</td></tr>", section.group(1), re.S))
    step_url = f"/runs/{made.run_id}#step={lineage['step']}"
    assert f'href="{step_url}"' in shown["step"]
    assert f'href="/runs/{made.run_id}"' in shown["run"]
    assert shown["program"] == "versions.sql"
    assert shown["position"] == "line 1, column 1"
    assert shown["table iris_train"].startswith("<code title=")  # its fingerprint, hashed
    assert "xgboost" in shown["libraries"] and "python" in shown["libraries"]


def test_a_run_step_links_back_to_the_version_it_trained_or_measured(made):
    client = made.client()
    ds = connect(made.url)
    try:
        trained = [ModelStore(ds).load("m", n).metadata["lineage"]["step"] for n in (1, 2)]
    finally:
        ds.close()
    described = read_run_file(made.run_dir / made.run_id)
    assert described is not None
    measured = [s["name"] for s in described["steps"] if "-evaluate-" in s["name"]]
    assert len(measured) == 2
    for number, steps in enumerate(zip(trained, measured, strict=True), 1):
        for step in steps:
            details = client.get(f"/runs/{made.run_id}/steps/{step}").json()
            url = f"/models/m?version={number}"
            assert details["model"] == {"name": "m", "version": number, "url": url}
    page = client.get(f"/runs/{made.run_id}").text
    assert "model-link" in page  # where the step panel shows it


def test_a_dropped_models_plots_are_not_shown_on_its_successor(tmp_path, monkeypatch):
    """After DROP MODEL, versions count from 1 again: what a step measured before the new
    version 1 was stored was of the dropped model."""
    made = Made(tmp_path)
    ds = connect(made.url)
    load_iris(ds)
    ds.close()
    (tmp_path / "plots").mkdir()
    monkeypatch.setenv("SQLML_RUN_DIR", str(made.run_dir))
    monkeypatch.chdir(tmp_path)
    first = "\n".join(PROGRAM.splitlines()[:4]) + "\n"  # version 1 and its evaluation
    (tmp_path / "first.sql").write_text(first)
    (tmp_path / "again.sql").write_text("DROP MODEL m;\n" + "\n".join(PROGRAM.splitlines()[:3]))
    assert main(["run", "first.sql", "--datasource", made.url]) == 0
    assert plots(made.client().get("/models/m").text) == ["v1.png"]
    ds = connect(made.url)
    ds.execute("UPDATE sqlml_run_steps SET ended_at = ended_at - 60")  # a minute before
    ds.close()
    assert main(["run", "again.sql", "--datasource", made.url]) == 0
    page = made.client().get("/models/m").text
    assert 'data-version="1"' in page and plots(page) == [] and evaluations(page) == []


def test_a_resumed_runs_skipped_step_links_to_the_version_its_first_run_trained(
    tmp_path, monkeypatch, capsys
):
    made = Made(tmp_path)
    ds = connect(made.url)
    load_iris(ds)
    ds.close()
    monkeypatch.setenv("SQLML_RUN_DIR", str(made.run_dir))
    program = tmp_path / "later.sql"
    program.write_text(
        "\n".join(PROGRAM.splitlines()[:3]) + "\nSELECT count(*) AS n FROM iris_train, later;\n"
    )
    assert main(["run", str(program), "--datasource", made.url]) == 1
    (first,) = [path.name for path in made.run_dir.iterdir()]
    assert main(["-e", "CREATE TABLE later AS SELECT 1 AS z;", "--datasource", made.url]) == 0
    assert main(["run", str(program), "--datasource", made.url, "--resume", first]) == 0
    (second,) = [
        path.name
        for path in made.run_dir.iterdir()
        if (read_run_file(path) or {}).get("resumed_from") == first
    ]
    capsys.readouterr()
    client = made.client()
    step = next(s["name"] for s in read_run_file(made.run_dir / second)["steps"])
    for run_id, state in ((first, "succeeded"), (second, "cached")):
        details = client.get(f"/runs/{run_id}/steps/{step}").json()
        assert details["state"] == state
        assert details["model"] == {"name": "m", "version": 1, "url": "/models/m?version=1"}
