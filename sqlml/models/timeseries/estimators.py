"""The time-series estimators: SQLFlow's model zoo ARIMAWithSTLDecomposition, trained as
sqlml's numpy ARIMA on a moving-average seasonal decomposition (:mod:`.model`)."""

from __future__ import annotations

import dataclasses

from sqlml.models.attributes import schema
from sqlml.models.estimator import Estimator
from sqlml.semantics.attributes import Attr, not_applied

MAX_ORDER = 30  # of p, d and q each
MAX_PERIOD = 10_000
MAX_HORIZON = 10_000  # steps forecast per series
MAX_SERIES = 100_000  # series in one model
# The one feature orders the rows: a date as text (a category) or a number.
FEATURE_KINDS = ("auto", "numeric", "dense", "category_id")

_DATES = (
    "sqlml orders the rows by the date without reading it; TO PREDICT forecasts the steps "
    "right after each training series: model.horizon of them, or one per row of its SELECT"
)
_ARIMA = (
    Attr(
        "model.order",
        "int list",
        None,
        "the ARIMA order [p, d, q]: autoregressive lags, differences, moving-average lags; "
        "left out, each series' own: d differences until a KPSS test finds its level "
        "stationary (at most 2), then the p and q up to 3 of the smallest AIC",
        minimum=0,
        maximum=MAX_ORDER,
        architecture=True,
    ),
    Attr(
        "model.period",
        "int list",
        [],
        "seasonal periods, in rows, removed one after another before the ARIMA fit",
        minimum=2,
        maximum=MAX_PERIOD,
        architecture=True,
    ),
    Attr(
        "model.series_key",
        "string",
        None,
        "the column(s) naming each series (comma-separated): one ARIMA is fitted per series, "
        "its rows ordered by the other feature, the date; left out, the rows are one series",
        aliases=("model.time_series_id_col",),
        architecture=True,
    ),
    Attr(
        "model.horizon",
        "int",
        None,
        "steps TO PREDICT forecasts after the end of each series of its SELECT, a row each "
        "(the series key, the date extended by the series' step, the forecast); left out, "
        "one step per row of the SELECT, in the order they come",
        minimum=1,
        maximum=MAX_HORIZON,
    ),
    not_applied("model.date_format", "string", "SQLFlow: the format of the dates", _DATES),
    not_applied("model.forecast_start", "string", "SQLFlow: the first date forecast", _DATES),
    not_applied("model.forecast_end", "string", "SQLFlow: the last date forecast", _DATES),
)


def _attributes() -> dict[str, Attr]:
    """The ARIMA's attributes and the common ones, with no validation rows by default (held
    out rows would be drawn at random, not the series' end)."""
    attributes = schema(*_ARIMA)
    split = attributes["validation.split"]
    attributes[split.name] = dataclasses.replace(
        split,
        default=0.0,
        doc="share of the rows held out for validation, drawn at random (not the series' "
        "end: they leave gaps in it); 0, the default: no validation",
    )
    return attributes


ESTIMATORS = (
    Estimator(
        "sqlflow_models.ARIMAWithSTLDecomposition",
        "timeseries",
        "regressor",
        _attributes(),
        "forecasting: the LABEL is the series, ordered by the feature (the date), one series "
        "per value of model.series_key; TO PREDICT writes the forecast of the steps after "
        "each training series (model.horizon of them, else one per row in order), with "
        "intervals for predict.confidence_level",
        feature_kinds=FEATURE_KINDS,
        instead="sqlml removes each seasonal period with a moving average (a centred trend, "
        "then the mean of each phase) instead of STL's LOESS, and fits the ARIMA by "
        "Hannan-Rissanen least squares instead of maximum likelihood",
    ),
)
