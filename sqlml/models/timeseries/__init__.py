"""The time-series family: SQLFlow's model zoo ARIMAWithSTLDecomposition in numpy (seasonal
decomposition by moving averages, then an ARIMA(p, d, q) on the remainder, fitted by
Hannan-Rissanen least squares, its order chosen by KPSS and AIC when not given), one per
series, stored as JSON; TO PREDICT writes the forecasts, with prediction intervals.

This module imports no more than the interface: the estimators' declarations load on first
lookup, :mod:`.model` when a model is trained or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family
from sqlml.models.timeseries.checks import arima_document

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


class TimeSeries(Family):
    name = "timeseries"
    format = "arima-json"
    extensions = (".json",)
    trainer_module = "sqlml.models.timeseries.model"
    scores_together = (
        "each row is the next step of its series' forecast, in the order the rows come"
    )
    predicts_rows = True

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.timeseries.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked JSON document, as stored."""
        arima_document(stored.data)
        return lambda path: path.write_bytes(stored.data)


FAMILY = TimeSeries()
