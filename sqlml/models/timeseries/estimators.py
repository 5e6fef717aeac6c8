"""The time-series estimators: SQLFlow's model zoo ARIMAWithSTLDecomposition, trained as
sqlml's numpy ARIMA on a moving-average seasonal decomposition (:mod:`.model`)."""

from __future__ import annotations

import dataclasses

from sqlml.models.attributes import schema
from sqlml.models.estimator import Estimator
from sqlml.semantics.attributes import Attr, not_applied

MAX_ORDER = 30  # of p, d and q each
MAX_PERIOD = 10_000
# The one feature orders the rows: a date as text (a category) or a number.
FEATURE_KINDS = ("auto", "numeric", "dense", "category_id")

_DATES = (
    "sqlml orders the rows by the date without reading it; TO PREDICT forecasts the steps "
    "right after the training series, one per row of its SELECT"
)
_ARIMA = (
    Attr(
        "model.order",
        "int list",
        [1, 0, 0],
        "the ARIMA order [p, d, q]: autoregressive lags, differences, moving-average lags",
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
        "forecasting: the LABEL is the series, ordered by the feature (the date); TO PREDICT "
        "writes the forecast of the steps after the training series, one per row in order",
        feature_kinds=FEATURE_KINDS,
        instead="sqlml removes each seasonal period with a moving average (a centred trend, "
        "then the mean of each phase) instead of STL's LOESS, and fits the ARIMA by "
        "Hannan-Rissanen least squares instead of maximum likelihood",
    ),
)
