"""TO EXPLAIN ... WITH explain.plot: the summary plot saved as a PNG."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.runtime import explain_plot
from sqlml.runtime.explain_plot import MAX_FEATURES, _jitter, _scaled

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
XGBOOST = (
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH train.num_boost_round = 10 LABEL class INTO m;"
)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; fails unless the file is a PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    return struct.unpack(">II", data[16:24])


def run_file(tmp_path: Path, url: str, program: str, capsys) -> tuple[int, str, str]:
    """Run ``program`` from a file in ``tmp_path / 'program'``."""
    folder = tmp_path / "program"
    folder.mkdir(exist_ok=True)
    file = folder / "explain.sql"
    file.write_text(program, encoding="utf-8")
    status = main(["run", str(file), "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def test_xgboost_multiclass_plot_beside_the_program(iris_duckdb_url, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the plot goes beside the program, not here
    (tmp_path / "program" / "plots").mkdir(parents=True)
    program = XGBOOST + (
        "SELECT * FROM iris_test TO EXPLAIN m WITH explain.plot = 'plots/iris.png' INTO ex;"
        "SELECT * FROM ex;"
    )
    status, out, err = run_file(tmp_path, iris_duckdb_url, program, capsys)
    assert status == 0, err
    plot = tmp_path / "program" / "plots" / "iris.png"
    assert f"plot of m saved to {plot}" in err
    # 8 inches wide, 1.5 + 0.4 per feature high, at 100 dpi
    assert png_size(plot) == (800, 310)
    assert out.splitlines()[1].startswith("petal_")
    assert not (tmp_path / "plots").exists()
    assert [p.name for p in plot.parent.iterdir()] == ["iris.png"]  # no temporary file left


def test_xgboost_binary_beeswarm_and_printed_table(duckdb_url, tmp_path, capsys):
    program = (
        "CREATE TABLE d AS SELECT i AS x, (i * 7919) % 13 AS noise, "
        "CASE WHEN i % 10 < 5 THEN 1 ELSE 0 END AS y FROM range(400) t(i);"
        "SELECT x % 10 AS x, noise, y FROM d TO TRAIN xgboost.gbtree "
        "WITH objective = 'binary:logistic', train.num_boost_round = 10 LABEL y INTO b;"
        f"SELECT x % 10 AS x, noise, y FROM d TO EXPLAIN b WITH explain.plot = "
        f"'{tmp_path / 'binary.png'}';"
    )
    status, out, err = run_file(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "feature,importance" and lines[1].startswith("x,")
    assert png_size(tmp_path / "binary.png") == (800, 230)


@pytest.mark.keras
def test_keras_plot_from_permutation_effects(iris_duckdb_url, tmp_path, capsys):
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [10], train.epoch = 30, train.batch_size = 8 "
        "LABEL class INTO k;"
        "SELECT * FROM iris_test TO EXPLAIN k WITH explain.plot = 'k.png', explain.seed = 3;"
    )
    status, out, err = run_file(tmp_path, iris_duckdb_url, program, capsys)
    assert status == 0, err
    ranked = [line.split(",")[0] for line in out.splitlines()[1:]]
    assert ranked[0].startswith("petal")
    assert png_size(tmp_path / "program" / "k.png") == (800, 310)


def test_plot_must_be_a_png(iris_duckdb_url, tmp_path, capsys):
    status, _, err = run_file(
        tmp_path,
        iris_duckdb_url,
        "SELECT * FROM t TO EXPLAIN m WITH explain.plot = 'a.jpg';",
        capsys,
    )
    assert status == 1
    assert "explain.sql:1:35: error: explain.plot must name a .png file, not 'a.jpg'" in err
    assert "hint: e.g. explain.plot = 'a.png'" in err


def test_unwritable_plot_path_is_an_error(iris_duckdb_url, tmp_path, capsys):
    program = XGBOOST + "SELECT * FROM iris_test TO EXPLAIN m WITH explain.plot = 'no/such.png';"
    status, _, err = run_file(tmp_path, iris_duckdb_url, program, capsys)
    assert status == 1
    assert f"cannot write the plot {tmp_path / 'program' / 'no' / 'such.png'}" in err
    assert "hint: explain.plot must name a file in an existing folder" in err
    assert "Traceback" not in err


def test_without_matplotlib_the_error_names_the_extra(
    iris_duckdb_url, tmp_path, monkeypatch, capsys
):
    for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, module, None)  # makes importing it fail
    program = XGBOOST + "SELECT * FROM iris_test TO EXPLAIN m WITH explain.plot = 'x.png';"
    status, _, err = run_file(tmp_path, iris_duckdb_url, program, capsys)
    assert status == 1
    assert "explain.plot needs matplotlib, which is not installed" in err
    assert "hint: pip install 'sqlml[plot]'" in err
    assert not (tmp_path / "program" / "x.png").exists()


def test_many_features_show_the_first_twenty(duckdb_url, tmp_path, capsys):
    columns = ", ".join(f"(i * {p}) % 17 AS f{n}" for n, p in enumerate(range(3, 28)))
    program = (
        f"CREATE TABLE w AS SELECT {columns}, i % 2 AS y FROM range(200) t(i);"
        "SELECT * FROM w TO TRAIN xgboost.gbtree WITH train.num_boost_round = 3 LABEL y INTO w;"
        "SELECT * FROM w TO EXPLAIN w WITH explain.plot = 'w.png';"
    )
    status, _, err = run_file(tmp_path, duckdb_url, program, capsys)
    assert status == 0, err
    height = round((1.5 + 0.4 * MAX_FEATURES) * 100)
    assert png_size(tmp_path / "program" / "w.png") == (800, height)


def test_jitter_spreads_crowded_dots_within_the_row():
    column = np.array([0.0] * 9 + [1.0])
    offsets = _jitter(column)
    assert len(set(offsets[:9].round(6))) == 9  # nine dots at one value: nine heights
    assert offsets[9] == 0  # a lone dot stays on the line
    assert np.abs(offsets).max() <= 0.4 + 1e-9


def test_colour_scale_clips_outliers_and_keeps_nulls():
    values = np.array([*range(100), 10_000, np.nan])
    scaled = _scaled(values)
    assert scaled[-2] == 1.0 and scaled[0] == 0.0
    assert np.isnan(scaled[-1])
    assert _scaled(np.array([np.nan, np.nan])) is None
    assert list(_scaled(np.array([2.0, 2.0]))) == [0.5, 0.5]


@pytest.fixture
def titles(monkeypatch) -> list[str]:
    """The title of each summary plot drawn (read from the figure; no PNG is written)."""
    drawn: list[str] = []
    monkeypatch.setattr(
        explain_plot, "write_png", lambda figure, *_: drawn.append(figure.axes[0].get_title())
    )
    return drawn


def test_titles_name_the_model_the_measure_and_the_rows(iris_duckdb_url, tmp_path, capsys, titles):
    explain = "TO EXPLAIN m WITH explain.plot = 'p.png'"
    program = XGBOOST + (
        f"SELECT * FROM iris_test {explain};"
        f"SELECT * FROM iris_train {explain}, summary.plot_type = bar;"
        f"SELECT * FROM iris_test {explain}, summary.plot_type = decision;"
        f"SELECT * FROM iris_test {explain} USING XGBoostExplainer;"
        f"SELECT * FROM iris_test {explain} USING PermutationExplainer;"
        f"SELECT * FROM iris_test {explain}, summary.title = 'Iris';"
    )
    status, _, err = run_file(tmp_path, iris_duckdb_url, program, capsys)
    assert status == 0, err
    assert titles == [
        "m: mean |SHAP| on 30 rows",  # multiclass: stacked bars of the classes
        "m: mean |SHAP| on 120 rows",
        "m: SHAP values of 30 rows",  # a line per row
        "m: total gain of each feature's splits",
        "m: loss increases of 30 rows",  # a dot per row
        "Iris",  # summary.title overrides
    ]
