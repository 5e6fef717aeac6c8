"""SQLFlow's time-series estimators: ARIMAWithSTLDecomposition (sqlml's numpy ARIMA on a
moving-average seasonal decomposition) forecasts a seasonal series with a trend;
RNNBasedTimeSeriesModel and LSTMBasedTimeSeriesModel (Keras) predict the next value of a
window, or the next model.n_out values (a LABEL of comma-separated numbers)."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.models.timeseries.arima import fit, forecast
from sqlml.models.timeseries.checks import arima_document

DAYS = 200
TRAINED = 170  # days trained on; the 30 after are forecast


def series() -> np.ndarray:
    """A daily series: a linear trend, a weekly cycle and a little noise."""
    t = np.arange(DAYS, dtype=float)
    noise = np.random.default_rng(0).normal(0, 0.2, DAYS)
    return 10 + 0.05 * t + 3 * np.sin(2 * np.pi * t / 7) + noise


def stored(document: dict) -> bytes:
    """One series' fitted document as a model stores it."""
    return json.dumps(
        {"keys": [], "series": [{**document, "key": [], "last": 0.0, "step": 1.0}]}
    ).encode()


def run(url: str, program: str, capsys) -> str:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    _, err = capsys.readouterr()
    assert status == 0, err
    return err


@pytest.fixture
def fund(duckdb_url):
    values = series()
    days = [(date(2014, 1, 1) + timedelta(days=int(d))).isoformat() for d in range(DAYS)]
    order = np.random.default_rng(1).permutation(TRAINED)  # rows stored out of date order
    ds = connect(duckdb_url)
    ds.write_table(
        ["fund"],
        {"time": np.array([days[i] for i in order], dtype=object), "purchase": values[order]},
        replace=True,
    )
    ds.write_table(["future"], {"time": np.array(days[TRAINED:], dtype=object)}, replace=True)
    ds.close()
    return values


def test_arima_with_stl_forecasts_a_seasonal_trend(fund, duckdb_url, capsys):
    err = run(
        duckdb_url,
        "SELECT time, purchase FROM fund TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition "
        "WITH model.order = [7, 0, 2], model.period = [7], model.date_format = '%Y-%m-%d', "
        "model.forecast_start = '2014-06-20', model.forecast_end = '2014-07-19' "
        "LABEL purchase INTO purchase_model;",
        capsys,
    )
    assert "moving average" in err and "forecast_start" in err and "forecast_end" in err
    run(
        duckdb_url,
        "SELECT time FROM future TO PREDICT forecast.purchase WITH predict.batch_size = 7 "
        "USING purchase_model;",
        capsys,
    )
    ds = connect(duckdb_url)
    try:
        found = [r[0] for r in ds.execute("SELECT purchase FROM forecast ORDER BY time").rows]
    finally:
        ds.close()
    assert len(found) == DAYS - TRAINED
    # the noise's standard deviation is 0.2; the weekly swing +-3
    assert np.abs(np.array(found) - fund[TRAINED:]).mean() < 0.4


def test_the_forecast_continues_across_batches_and_orders():
    values = series()
    for order in ([1, 1, 0], [2, 1, 1], [7, 0, 2]):
        document = fit(values[:TRAINED], order, [7])
        whole = forecast(document, 30)
        assert np.abs(whole - values[TRAINED:]).mean() < 0.4, order
        assert np.allclose(
            np.concatenate([forecast(document, 12), forecast(document, 18, 12)]), whole
        )
        arima_document(stored(document))


def test_a_series_too_short_for_its_periods_is_refused():
    with pytest.raises(ModelError, match="too few"):
        fit(series()[:20], [1, 0, 0], [7, 30])


def test_a_tampered_model_is_refused():
    document = fit(series(), [1, 0, 0], [7])
    document["seasonals"] = [[1.0, 2.0]]
    with pytest.raises(ModelError, match="seasonal patterns"):
        arima_document(stored(document))


def windows(count: int, start: int, n_in: int = 7) -> dict[str, np.ndarray]:
    """``count`` rows of a sine of period 12: ``n_in`` past values x1..xn and the next, y."""
    t = np.arange(start, start + count + n_in, dtype=float)
    wave = np.sin(2 * np.pi * t / 12)
    columns = {f"x{i + 1}": wave[i : i + count] for i in range(n_in)}
    return {**columns, "y": wave[n_in : n_in + count]}


def test_an_lstm_time_series_model_learns_a_periodic_series(duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.write_table(["waves"], windows(240, 0), replace=True)
    ds.write_table(["later"], windows(24, 500), replace=True)
    ds.close()
    run(
        duckdb_url,
        "SELECT * FROM waves TO TRAIN sqlflow_models.LSTMBasedTimeSeriesModel "
        "WITH model.n_in = 7, model.stack_units = [16], train.epoch = 40, "
        "train.batch_size = 16, validation.split = 0 LABEL y INTO waves_model;",
        capsys,
    )
    run(duckdb_url, "SELECT * FROM later TO PREDICT next.y USING waves_model;", capsys)
    ds = connect(duckdb_url)
    try:
        found = np.array([r[0] for r in ds.execute("SELECT y FROM next").rows])
    finally:
        ds.close()
    truth = windows(24, 500)["y"]
    assert len(found) == len(truth)
    # the wave's amplitude is 1
    assert np.abs(found - truth).mean() < 0.1


def test_a_window_of_the_wrong_width_is_refused(duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.write_table(["waves"], windows(20, 0, n_in=5), replace=True)
    ds.close()
    status = main(
        [
            "-e",
            "SELECT * FROM waves TO TRAIN sqlflow_models.RNNBasedTimeSeriesModel "
            "WITH model.n_in = 7, model.stack_units = [4] LABEL y INTO waves_model;",
            "--datasource",
            duckdb_url,
        ]
    )
    assert status != 0
    assert "model.n_in x model.n_features = 7" in capsys.readouterr().err


def test_several_future_values_train_on_held_out_rows_in_memory(duckdb_url, capsys):
    """A LABEL of several values a row is refused with validation.select and with
    train.external_memory, before any row is read."""
    train = (
        "SELECT * FROM no_such_table TO TRAIN sqlflow_models.RNNBasedTimeSeriesModel "
        "WITH model.n_out = 4, {attribute} LABEL y INTO m;"
    )
    for attribute, refusal in (
        ("validation.select = 'SELECT * FROM t'", "validation.select's rows is not read"),
        ("train.external_memory = true", "trains on rows in memory only"),
    ):
        program = train.format(attribute=attribute)
        assert main(["-e", program, "--datasource", duckdb_url]) == 1
        err = capsys.readouterr().err
        assert "error: model.n_out is 4: " in err and refusal in err
        assert "no_such_table" not in err


def steps_ahead(count: int, start: int, n_in: int = 7, n_out: int = 3) -> dict[str, np.ndarray]:
    """``count`` rows of the sine of period 12: ``n_in`` past values x1..xn and the
    ``n_out`` next ones, y1..ym."""
    t = np.arange(start, start + count + n_in + n_out, dtype=float)
    wave = np.sin(2 * np.pi * t / 12)
    past = {f"x{i + 1}": wave[i : i + count] for i in range(n_in)}
    return {**past, **{f"y{i + 1}": wave[n_in + i : n_in + i + count] for i in range(n_out)}}


# SQLFlow's form: the n_out future values as one comma-separated text (doc/tutorial/
# energe_lstmbasedtimeseries.md)
SELECT_STEPS = "SELECT x1, x2, x3, x4, x5, x6, x7, concat(y1, ',', y2, ',', y3) AS y FROM {table}"


def test_a_time_series_model_predicts_several_steps_ahead(duckdb_url, capsys):
    """model.n_out = 3: the LABEL's three values a row are learnt; TO PREDICT writes three
    comma-separated values in the result column (the SELECT's label column left out), much
    closer to the truth than the last value repeated; TO EVALUATE measures all three."""
    ds = connect(duckdb_url)
    ds.write_table(["waves"], steps_ahead(240, 0), replace=True)
    later = steps_ahead(24, 500)
    ds.write_table(["later"], later, replace=True)
    ds.close()
    err = run(
        duckdb_url,
        SELECT_STEPS.format(table="waves")
        + " TO TRAIN sqlflow_models.LSTMBasedTimeSeriesModel WITH model.n_in = 7, "
        "model.n_out = 3, model.stack_units = [16], train.epoch = 40, train.batch_size = 16, "
        "validation.metrics = 'MeanAbsoluteError' LABEL y INTO steps_model;",
        capsys,
    )
    run(
        duckdb_url,
        SELECT_STEPS.format(table="later") + " TO PREDICT ahead.y USING steps_model;"
        f"{SELECT_STEPS.format(table='later')} TO EVALUATE steps_model LABEL y INTO measured;",
        capsys,
    )
    ds = connect(duckdb_url)
    try:
        result = ds.execute("SELECT * FROM ahead")
        metadata = ds.execute("SELECT * FROM measured")
    finally:
        ds.close()
    assert result.columns == ["x1", "x2", "x3", "x4", "x5", "x6", "x7", "y"]
    texts = [row[-1] for row in result.rows]
    found = np.array([[float(v) for v in text.split(",")] for text in texts])
    truth = np.column_stack([later["y1"], later["y2"], later["y3"]])
    assert found.shape == truth.shape == (24, 3)
    naive = np.repeat(later["x7"][:, None], 3, axis=1)  # the last value, repeated
    rmse = float(np.sqrt(np.mean((found - truth) ** 2)))
    naive_rmse = float(np.sqrt(np.mean((naive - truth) ** 2)))
    assert naive_rmse > 0.7  # the wave's amplitude is 1; a quarter period moves it by 1
    assert rmse < 0.1, (rmse, naive_rmse)
    measured = dict(zip(metadata.columns, metadata.rows[0], strict=True))
    assert measured["mse"] == pytest.approx(rmse**2, rel=1e-3)
    # the held-out rows' three values, measured under the name validation.metrics gives
    assert float(re.search(r"validation_MeanAbsoluteError (\S+)", err)[1]) < 0.1


def test_a_label_of_the_wrong_number_of_values_is_refused(duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.write_table(["waves"], steps_ahead(20, 0), replace=True)
    ds.close()
    train = (
        " TO TRAIN sqlflow_models.RNNBasedTimeSeriesModel WITH model.n_in = 7, "
        "model.n_out = 4, model.stack_units = [4] LABEL y INTO steps_model;"
    )
    status = main(["-e", SELECT_STEPS.format(table="waves") + train, "--datasource", duckdb_url])
    assert status == 1
    err = capsys.readouterr().err
    assert "LABEL column y of the SELECT holds '" in err
    assert "in row 1, not 4 comma-separated numbers (model.n_out)" in err
    assert "hint: select the 4 values as one text: concat(v1, ',', v2, ',', v3, ',', ...)" in err
    numeric = "SELECT x1, x2, x3, x4, x5, x6, x7, y1 AS y FROM waves" + train
    assert main(["-e", numeric, "--datasource", duckdb_url]) == 1
    assert "holds one number a row, but model.n_out is 4" in capsys.readouterr().err
