"""sqlml ui's models pages (Starlette's TestClient): the list of models, a model's versions,
attributes, training statement, metrics and TO EVALUATE plot, a comparison of two versions, a
search's trials, long lists shown 100 rows a page, and pages that read no model's bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import import_or_skip, load_iris

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore
from sqlml.tables import MODEL_CHUNKS, MODEL_VERSIONS

import_or_skip("starlette")  # the ui extra
from starlette.testclient import TestClient  # noqa: E402

from sqlml.ui.server import Settings, create_app  # noqa: E402
from sqlml.ui.svg_chart import Point, scatter  # noqa: E402

MODEL = "iris_boost"
SEARCHED = "iris_searched"
PROGRAM = f"""\
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 2, eta = 0.3,
     validation.select = 'SELECT * FROM iris_test'
LABEL class INTO {MODEL};
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 2, eta = 0.7,
     validation.select = 'SELECT * FROM iris_test'
LABEL class INTO {MODEL};
SELECT * FROM iris_test TO EVALUATE {MODEL} WITH evaluate.plot = 'plots/evaluation.png'
LABEL class INTO iris_evaluation;
SELECT * FROM iris_test TO EXPLAIN {MODEL} WITH summary.plot_type = 'bar' INTO iris_explained;
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 2, max_depth = CHOICE(1, 3),
     search.algorithm = grid, validation.select = 'SELECT * FROM iris_test'
LABEL class INTO {SEARCHED};
"""


class Store:
    """A DuckDB file with two versions of MODEL, its evaluation plot, and a searched model,
    made by ``sqlml run`` (so that the run record names the plot)."""

    def __init__(self, folder: Path) -> None:
        self.url = f"duckdb:///{folder / 'models.duckdb'}"
        self.run_dir = folder / "runs"
        self.folder = folder

    def client(self) -> TestClient:
        settings = Settings(self.url, self.run_dir, self.folder)
        return TestClient(create_app(settings), base_url="http://127.0.0.1:8765")

    def metadata(self, name: str, version: int) -> dict:
        ds = connect(self.url)
        try:
            return ModelStore(ds).load(name, version).metadata
        finally:
            ds.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    folder = tmp_path_factory.mktemp("ui-models")
    made = Store(folder)
    ds = connect(made.url)
    load_iris(ds)
    ds.close()
    (folder / "plots").mkdir()
    program = folder / "models.sql"
    program.write_text(PROGRAM)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SQLML_RUN_DIR", str(made.run_dir))
        status = main(["run", str(program), "--datasource", made.url])
    assert status == 0
    yield made


def cells(html: str, table_id: str) -> list[list[str]]:
    """The text of each row's cells in the table ``table_id`` of ``html``."""
    table = re.search(rf'<table id="{table_id}"[^>]*>(.*?)</table>', html, re.DOTALL)
    assert table is not None, f"no table {table_id}"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.DOTALL)
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.DOTALL)
        ]
        for r in rows
    ]


def test_the_list_shows_each_model_with_its_newest_version_and_metrics(store):
    page = store.client().get("/models")
    assert page.status_code == 200
    row = re.search(rf'<tr class="model" data-model="{MODEL}">(.*?)</tr>', page.text, re.DOTALL)
    assert row is not None
    assert f'<a href="/models/{MODEL}">' in row.group(1)
    accuracy = store.metadata(MODEL, 2)["metrics"]["validation_accuracy"]
    texts = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
    assert texts[:4] == [MODEL, "2", "xgboost.gbtree", "classifier"]
    assert f"validation_accuracy {accuracy:.6g}" in texts[-1]
    assert f'data-model="{SEARCHED}"' in page.text


def test_a_models_page_shows_its_metrics_attributes_statement_and_versions(store):
    page = store.client().get(f"/models/{MODEL}")
    assert page.status_code == 200
    stored = store.metadata(MODEL, 2)
    metrics = {row[0]: row[1] for row in cells(page.text, "metrics")[1:]}
    assert metrics == {name: f"{value:.6g}" for name, value in stored["metrics"].items()}
    assert any(name.startswith("train_") for name in metrics)
    assert any(name.startswith("validation_") for name in metrics)
    attributes = {row[0]: row[1] for row in cells(page.text, "attributes")[1:]}
    assert attributes["eta"] == "0.7" and attributes["train.num_boost_round"] == "2"
    statement = re.search(r'<pre id="training-statement">(.*?)</pre>', page.text, re.DOTALL)
    assert statement is not None and "eta = 0.7" in statement.group(1)
    versions = re.findall(r'<tr class="version[^"]*" data-version="(\d+)">', page.text)
    assert versions == ["2", "1"]


def test_an_older_version_is_shown_when_asked_for(store):
    page = store.client().get(f"/models/{MODEL}?version=1")
    attributes = {row[0]: row[1] for row in cells(page.text, "attributes")[1:]}
    assert attributes["eta"] == "0.3"
    assert 'data-version="1">' in page.text
    assert store.client().get(f"/models/{MODEL}?version=9").status_code == 404


def test_a_version_is_found_by_its_alias_and_shows_its_aliases(store):
    ds = connect(store.url)
    ModelStore(ds).set_alias(MODEL, "champion", 1)
    try:
        page = store.client().get(f"/models/{MODEL}?version=champion")
        missing = store.client().get(f"/models/{MODEL}?version=nope")
    finally:
        ModelStore(ds).drop_alias(MODEL, "champion")
        ds.close()
    assert page.status_code == 200
    assert re.search(r'<h1 id="model" data-model="[^"]+" data-version="1">', page.text)
    assert '<span id="aliases" class="alias">champion</span>' in page.text
    rows = {row[0]: row[1] for row in cells(page.text, "versions")[1:]}
    assert rows == {"2": "", "1": "champion"}
    assert missing.status_code == 404
    assert f"model {MODEL} has no version or alias nope" in missing.text


def test_the_evaluation_plot_is_shown_in_the_page(store):
    client = store.client()
    page = client.get(f"/models/{MODEL}")
    figure = re.search(
        r'<figure class="plot" data-kind="evaluate">(.*?)</figure>', page.text, re.DOTALL
    )
    assert figure is not None, page.text
    source = re.search(r'<img src="([^"]+)"', figure.group(1))
    assert source is not None
    image = client.get(source.group(1))
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content == (store.folder / "plots" / "evaluation.png").read_bytes()


def test_an_explanation_plot_in_its_default_file_is_shown(store):
    """summary.* without explain.plot draws <model>_explain.png: found as the run found it."""
    client = store.client()
    page = client.get(f"/models/{MODEL}").text
    figure = re.search(
        r'<figure class="plot" data-kind="explain">.*?<img src="([^"]+)"', page, re.DOTALL
    )
    assert figure is not None
    image = client.get(figure.group(1))
    assert image.content == (store.folder / f"{MODEL}_explain.png").read_bytes()


def test_a_datasource_that_cannot_be_read_is_a_page_without_its_password(tmp_path):
    url = "postgresql://someone:s3cret-Passw0rd@127.0.0.1:9/nowhere"
    client = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)))
    for address in ("/models", f"/models/{MODEL}", f"/models/{MODEL}/compare"):
        page = client.get(address)
        assert page.status_code == 503
        assert "someone:***@127.0.0.1" in page.text and "s3cret-Passw0rd" not in page.text


def test_a_plot_address_serves_only_a_recorded_plot_of_that_model(store):
    client = store.client()
    page = client.get(f"/models/{MODEL}")
    source = re.search(r'<img src="/models/[^/]+/plots/([^/]+)/([^"]+)"', page.text)
    assert source is not None
    run_id, step = source.groups()
    assert client.get(f"/models/{SEARCHED}/plots/{run_id}/{step}").status_code == 404
    assert client.get(f"/models/{MODEL}/plots/{run_id}/s1-train-{MODEL}").status_code == 404
    assert client.get(f"/models/{MODEL}/plots/%2E%2E/{step}").status_code == 404


def test_two_versions_compare_side_by_side_with_differences_marked(store):
    page = store.client().get(f"/models/{MODEL}/compare?a=1&b=2")
    assert page.status_code == 200
    found = re.findall(
        r'<tr class="(differs|same)" data-section="[^"]+" data-key="([^"]+)"', page.text
    )
    marked = {key: kind for kind, key in found}
    assert marked["eta"] == "differs"
    assert marked["estimator"] == "same" and marked["train.num_boost_round"] == "same"
    comparison = {row[0]: row[1:] for row in cells(page.text, "comparison") if len(row) == 3}
    assert comparison["eta"] == ["0.3", "0.7"]


def test_a_searchs_trials_show_as_a_table_and_a_chart_per_hyperparameter(store):
    client = store.client()
    search = store.metadata(SEARCHED, 1)["search"]
    for address in (f"/models/{SEARCHED}", f"/models/{SEARCHED}/compare"):
        page = client.get(address)
        trials = re.findall(r'<tr class="trial( best)?" data-trial="(\d+)">', page.text)
        assert [int(number) for _, number in trials] == [t["trial"] for t in search["results"]]
        assert [number for best, number in trials if best] == [str(search["best_trial"])]
        chart = re.search(
            r'<figure class="plot trials" data-hyperparameter="max_depth">(.*?)</figure>',
            page.text,
            re.DOTALL,
        )
        assert chart is not None and "<svg" in chart.group(1)
        assert len(re.findall(r"<circle ", chart.group(1))) == len(search["results"])


def test_pages_read_no_models_bytes(store, tmp_path):
    """With the chunks table emptied, every page still shows the model: pages read metadata."""
    copy = Store(tmp_path)
    copy.run_dir = store.run_dir
    (tmp_path / "models.duckdb").write_bytes((store.folder / "models.duckdb").read_bytes())
    ds = connect(copy.url)
    ds.execute(f"DELETE FROM {MODEL_CHUNKS}")
    ds.close()
    client = copy.client()
    for address in ("/models", f"/models/{MODEL}", f"/models/{MODEL}/compare?a=1&b=2"):
        page = client.get(address)
        assert page.status_code == 200 and MODEL in page.text


def test_a_model_with_damaged_metadata_is_listed_with_what_is_wrong(store, tmp_path):
    url = f"duckdb:///{tmp_path / 'damaged.duckdb'}"
    ds = connect(url)
    ModelStore(ds).save("good", store.metadata(MODEL, 2), b"x")
    ModelStore(ds).save("broken", store.metadata(MODEL, 2), b"x")
    ds.execute(
        f"UPDATE {MODEL_VERSIONS} SET metadata = '{{\"estimator\": 1}}' WHERE name = 'broken'"
    )
    ds.close()
    client = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)))
    listing = client.get("/models").text
    assert "(metadata unreadable)" in listing and 'data-model="good"' in listing
    page = client.get("/models/broken")
    assert page.status_code == 200
    assert "its stored metadata is damaged" in page.text


def test_a_missing_model_is_a_404_that_says_so(store):
    page = store.client().get("/models/no_such_model")
    assert page.status_code == 404
    assert "model no_such_model does not exist" in page.text


def shown_versions(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr class="version[^"]*" data-version="(\d+)"', html)]


def link(html: str, rel: str) -> str:
    """The address of the pager's link ``rel`` (next, prev)."""
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', html)
    assert found, f"no {rel} link"
    return found.group(1).replace("&amp;", "&")


def many_versions(store: Store, folder: Path, numbers: range) -> TestClient:
    """A ui over a store holding versions ``numbers`` of the model "many", inserted as the
    store writes them (training 1,000 would take minutes)."""
    url = f"duckdb:///{folder / 'many.duckdb'}"
    ds = connect(url)
    ModelStore(ds).save("many", store.metadata(MODEL, 2), b"x")
    text = json.dumps(store.metadata(MODEL, 2), sort_keys=True)
    ds.execute(f"DELETE FROM {MODEL_VERSIONS}")
    rows = ", ".join(f"('many', {v}, 1, $${text}$$)" for v in numbers)
    ds.execute(f"INSERT INTO {MODEL_VERSIONS} (name, version, size, metadata) VALUES {rows}")
    ds.close()
    return TestClient(create_app(Settings(url, folder / "runs", folder)))


def test_a_store_of_1000_versions_shows_a_page_of_100_and_links_to_the_older(store, tmp_path):
    """1,000 versions of one model, inserted as the store writes them (training 1,000 would
    take minutes): the page shows the newest 100 and links to the older ones; a version asked
    for shows on its page of the list; the list of models still reads one row each."""
    client = many_versions(store, tmp_path, range(1, 1001))
    page = client.get("/models/many")  # its time: benchmarks/ui_models.py
    assert page.status_code == 200
    assert shown_versions(page.text) == list(range(1000, 900, -1))
    assert '<tr class="version current" data-version="1000">' in page.text
    assert "showing 1 to 100 of 1,000 versions" in page.text and 'rel="prev"' not in page.text
    older = client.get(link(page.text, "next")).text
    assert shown_versions(older) == list(range(900, 800, -1))
    assert "showing 101 to 200 of 1,000 versions" in older
    assert shown_versions(client.get(link(older, "prev")).text) == list(range(1000, 900, -1))
    last = client.get("/models/many?page=10").text
    assert shown_versions(last) == list(range(100, 0, -1)) and 'rel="next"' not in last
    assert shown_versions(client.get("/models/many?page=99").text) == list(range(100, 0, -1))
    oldest = client.get("/models/many?version=3").text  # the form #find-version asks so
    assert 'id="model" data-model="many" data-version="3"' in oldest
    assert '<tr class="version current" data-version="3">' in oldest
    assert "showing 901 to 1,000 of 1,000 versions" in oldest
    assert client.get(link(oldest, "prev")).text.count('class="version current"') == 0
    listing = client.get("/models").text
    assert listing.count('<tr class="model"') == 1 and 'id="models-pager"' not in listing


def test_the_comparison_of_1000_versions_suggests_the_newest_and_compares_any(store, tmp_path):
    client = many_versions(store, tmp_path, range(3, 1001))  # versions 1 and 2 dropped
    page = client.get("/models/many/compare")
    assert page.status_code == 200
    assert 'id="comparison" data-a="999" data-b="1000"' in page.text  # the newest two
    suggested = re.search(r'<datalist id="recent-versions">(.*?)</datalist>', page.text)
    assert suggested is not None
    assert re.findall(r'<option value="(\d+)">', suggested.group(1)) == [
        str(v) for v in range(1000, 980, -1)
    ]
    assert page.text.count("<option") == 20 and "998 versions stored, the newest 20" in page.text
    inputs = re.findall(r'<input type="number" name="([ab])"[^>]* value="(\d+)"', page.text)
    assert inputs == [("a", "999"), ("b", "1000")]
    older = client.get("/models/many/compare?a=3&b=500")  # typed: not among those suggested
    assert 'id="comparison" data-a="3" data-b="500"' in older.text
    assert re.findall(r'name="([ab])"[^>]* value="(\d+)"', older.text) == [("a", "3"), ("b", "500")]
    dropped = client.get("/models/many/compare?a=1&b=500")
    assert dropped.status_code == 404 and "model many has no version 1" in dropped.text


def test_a_list_of_many_models_shows_a_page_and_the_filter_finds_the_others(store, tmp_path):
    url = f"duckdb:///{tmp_path / 'models.duckdb'}"
    ds = connect(url)
    ModelStore(ds).save("m0000", store.metadata(MODEL, 2), b"x")
    text = json.dumps(store.metadata(MODEL, 2), sort_keys=True)
    ds.execute(f"DELETE FROM {MODEL_VERSIONS}")
    rows = ", ".join(f"('m{i:04}', 1, 1, $${text}$$)" for i in range(250))
    ds.execute(f"INSERT INTO {MODEL_VERSIONS} (name, version, size, metadata) VALUES {rows}")
    ds.close()
    client = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)))

    def listed(html: str) -> list[str]:
        return re.findall(r'<tr class="model" data-model="([^"]+)"', html)

    first = client.get("/models").text
    assert listed(first) == [f"m{i:04}" for i in range(100)]
    assert "showing 1 to 100 of 250 models" in first
    second = client.get(link(first, "next")).text
    assert listed(second) == [f"m{i:04}" for i in range(100, 200)]
    assert listed(client.get("/models", params={"q": "m0242"}).text) == ["m0242"]
    filtered = client.get("/models", params={"q": "m01"}).text  # m0100 to m0199
    assert listed(filtered) == [f"m{i:04}" for i in range(100, 200)]
    assert 'id="models-pager"' not in filtered and "100 of 250 models" in filtered
    paged = client.get("/models", params={"q": "m0", "page": "3"}).text
    assert listed(paged) == [f"m{i:04}" for i in range(200, 250)]
    assert link(paged, "prev") == "/models?q=m0&page=2"


def test_a_version_whose_metadata_changed_is_read_again(store, tmp_path):
    """The fields lists keep of a version are kept by its text: a model dropped and trained
    again (its version 1 anew) shows its new estimator."""
    url = f"duckdb:///{tmp_path / 'again.duckdb'}"
    ds = connect(url)
    ModelStore(ds).save("again", store.metadata(MODEL, 2), b"x")
    ds.close()
    client = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)))
    assert "xgboost.gbtree" in client.get("/models").text
    ds = connect(url)
    ModelStore(ds).drop("again")
    ModelStore(ds).save("again", {**store.metadata(MODEL, 2), "estimator": "xgboost.dart"}, b"x")
    ds.close()
    for address in ("/models", "/models/again"):
        page = client.get(address).text
        assert "<td>xgboost.dart</td>" in page and "<td>xgboost.gbtree</td>" not in page


def circles(svg: str) -> list[tuple[float, float]]:
    """The centre of each point of an SVG chart, in its order."""
    found = re.findall(r'<circle [^>]*cx="([\d.]+)" cy="([\d.]+)"', svg)
    return [(float(x), float(y)) for x, y in found]


def test_a_chart_puts_numbers_spanning_decades_on_a_logarithmic_axis():
    points = [Point(x, 0.5, f"x {x}") for x in (0.001, 0.01, 0.1)]
    xs = [x for x, _ in circles(str(scatter(points, "eta", "validation_accuracy")))]
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.2)
    linear = [Point(x, 0.5, f"x {x}") for x in (1, 2, 4)]
    xs = [x for x, _ in circles(str(scatter(linear, "depth", "validation_accuracy")))]
    assert xs[2] - xs[1] == pytest.approx(2 * (xs[1] - xs[0]), abs=0.2)


def test_a_chart_spaces_text_values_evenly_and_escapes_them():
    points = [
        Point("<b>", 0.9, "best", best=True),
        Point("gbtree", 0.5, "a"),
        Point("dart", 0.7, "b"),
    ]
    svg = str(scatter(points, "booster", "validation_accuracy"))
    assert "<b>" not in svg and "&lt;b&gt;" in svg
    xs = sorted(x for x, _ in circles(svg))
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.2)
    ys = dict(zip(("<b>", "gbtree", "dart"), (y for _, y in circles(svg)), strict=True))
    assert ys["<b>"] < ys["dart"] < ys["gbtree"]  # higher values are drawn higher up
    assert svg.count('class="point best"') == 1


def test_the_list_filters_models_by_name_estimator_or_task(store):
    client = store.client()

    def listed(query: str) -> list[str]:
        page = client.get("/models", params={"q": query}).text
        return re.findall(r'<tr class="model" data-model="([^"]+)"', page)

    assert listed("SEARCH") == [SEARCHED]
    assert listed("gbtree") == [MODEL, SEARCHED]
    assert listed("classifier") == [MODEL, SEARCHED]
    nothing = client.get("/models?q=no-such-thing").text
    assert (
        '<tr class="model"' not in nothing and "No model's name, estimator or task holds" in nothing
    )
