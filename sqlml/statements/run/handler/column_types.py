"""The SELECT's column types on a TO RUN's way out and back.

sqlml's columns hold an integer or boolean column with a NULL as floats (NaN), and dates
and timestamps as the driver gives them (datetime64, Python values, or text on SQLite).
Knowing the SELECT's SQL types (:meth:`Datasource.result_types`), the program gets each
column in a form that keeps its values and NULLs (:func:`program_view`), and an INTO
table's column with a SELECT column's name and values that type can hold is declared with
that type (:func:`declared`): columns returned unchanged keep their types.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sqlml.datasources.arrays import object_array
from sqlml.datasources.base import Columns

EXACT_FLOATS = 2**53  # integers a float64 holds exactly

# An integer type's first word and its width in bits.
_INTEGER_BITS = {"tinyint": 8, "int1": 8, "smallint": 16, "int2": 16, "mediumint": 24,
                 "int": 32, "integer": 32, "int4": 32, "bigint": 64, "int8": 64,
                 "long": 64, "hugeint": 128}  # fmt: skip
_FLOATS = {"double", "float", "real", "float4", "float8"}
_DECIMALS = {"decimal", "numeric", "dec"}
_TEXTS = {"varchar", "character", "char", "text", "bpchar", "string", "tinytext",
          "mediumtext", "longtext", "nvarchar", "nchar", "clob"}  # fmt: skip


def kind(sql_type: str) -> str | None:
    """What an SQL type holds: "bool", "int", "float", "decimal", "date", "timestamp",
    "zoned" (a timestamp with a time zone), "text", or None (another type: a program's
    column of that name is written as its values tell)."""
    text = sql_type.strip().lower()
    if text in ("boolean", "bool", "tinyint(1)"):
        return "bool"
    words = re.findall(r"[a-z_0-9]+", text)
    first = words[0] if words else ""
    if "[]" in text or "array" in words or first in ("struct", "map", "list"):
        return None
    if first in _INTEGER_BITS:
        return "int"
    if first in _FLOATS:
        return "float"
    if first in _DECIMALS:
        return "decimal"
    if first == "date":
        return "date"
    if first == "timestamptz" or (first == "timestamp" and "zone" in words):
        return "zoned"
    if first in ("timestamp", "datetime"):
        return "timestamp"
    if first in _TEXTS:
        return "text"
    return None


def program_view(columns: Columns, types: Mapping[str, str]) -> Columns:
    """``columns`` as the program gets them: integers and booleans with NULLs as Python
    values and None, dates as ``datetime.date``, timestamps as ``datetime.datetime``."""
    viewed = dict(columns)
    for name, values in columns.items():
        convert = _VIEWS.get(kind(types.get(name, "")) or "")
        if convert is not None:
            viewed[name] = convert(values)
    return viewed


def declared(columns: Columns, types: Mapping[str, str]) -> tuple[Columns, dict[str, str]]:
    """The columns of an INTO table to write, and the SQL types to declare: a SELECT
    column's type for each column of its name whose values it holds."""
    written, declaring = dict(columns), {}
    for name, values in columns.items():
        sql_type = types.get(name)
        convert = _WRITES.get(kind(sql_type or "") or "")
        converted = None if convert is None else convert(values, sql_type or "")
        if converted is not None:
            written[name], declaring[name] = converted, sql_type or ""
    return written, declaring


def _integers(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind != "f":
        return values
    missing = np.isnan(values)
    if not missing.any() or not _whole(values[~missing]):
        return values
    return _with_none([int(v) for v in values[~missing].tolist()], missing)


def _booleans(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind not in "iuf":
        return values
    missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), bool)
    present = values[~missing]
    if not np.isin(present, (0, 1)).all():
        return values
    if not missing.any():
        return present.astype(bool)
    return _with_none([bool(v) for v in present.tolist()], missing)


def _moments(dates: bool) -> Callable[[np.ndarray], np.ndarray]:
    """datetime64 or ISO text (SQLite's) as Python dates or datetimes; NaT as None."""
    unit = "datetime64[D]" if dates else "datetime64[us]"

    def convert(values: np.ndarray) -> np.ndarray:
        if values.dtype.kind == "M":
            array = values.astype(unit).astype(object)
            array[np.isnat(values)] = None
            return array
        if values.dtype != object:
            return values
        try:
            return object_array([_moment(v, dates) for v in values.tolist()])
        except ValueError:  # values that are not all dates: as they are
            return values

    return convert


def _moment(value: Any, dates: bool) -> Any:
    """A driver's date or timestamp value (or SQLite's text of one) as a date or datetime;
    a ValueError for anything else, and for text that the date's own text would not repeat
    (written back, it would differ)."""
    if isinstance(value, str):
        parsed = (datetime.date if dates else datetime.datetime).fromisoformat(value)
        if str(parsed) != value:
            raise ValueError(f"not a date in its own form: {value!r}")
        return parsed
    if value is not None and not isinstance(value, datetime.date):
        raise ValueError(f"not a date: {value!r}")
    if dates and isinstance(value, datetime.datetime):
        if value.timetz() != datetime.time():
            raise ValueError(f"not a date: {value!r}")  # a time, which a date would lose
        return value.date()
    return value


_VIEWS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "int": _integers,
    "bool": _booleans,
    "date": _moments(dates=True),
    "timestamp": _moments(dates=False),
    "zoned": lambda values: _in_utc(_moments(dates=False)(values)),
}


def _as_integers(values: np.ndarray, sql_type: str) -> np.ndarray | None:
    items = _present(values)
    if values.dtype.kind == "f":
        present = values[~np.isnan(values)]
        if not _whole(present):
            return None
        items = present.tolist()
    elif values.dtype.kind in "iu":
        items = values.tolist()
    elif values.dtype != object or not all(type(v) is int for v in items):
        return None
    return _numbers(values, items) if _in_range(items, sql_type) else None


def _as_booleans(values: np.ndarray, sql_type: str) -> np.ndarray | None:
    if values.dtype.kind == "b":
        return values
    items = _present(values)
    if values.dtype.kind in "iuf":
        items = [v for v in values.tolist() if v == v]
    elif values.dtype != object or not all(type(v) is bool for v in items):
        return None
    return _numbers(values, items) if all(v in (0, 1) for v in items) else None


def _as_floats(values: np.ndarray, sql_type: str) -> np.ndarray | None:
    """Numbers; for a type of 4 bytes (REAL, FLOAT), only those it holds exactly."""
    if values.dtype.kind not in "iuf":
        return None
    words = re.findall(r"[a-z_0-9]+", sql_type.lower())
    if words[:1] in (["float4"], ["real"], ["float"]) and len(words) == 1:
        numbers = values.astype(np.float64)
        with np.errstate(over="ignore"):  # too large: infinite, so unequal
            single = numbers.astype(np.float32).astype(np.float64)
        return values if np.array_equal(single, numbers, equal_nan=True) else None
    return values


def _as_decimals(values: np.ndarray, sql_type: str) -> np.ndarray | None:
    """Numbers the declared precision and scale hold exactly (DECIMAL(p, s))."""
    if values.dtype.kind not in "iuf":
        return None
    numbers = values.astype(np.float64)
    numbers = numbers[~np.isnan(numbers)]
    found = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", sql_type)
    if found is None:
        return values
    precision, scale = int(found.group(1)), int(found.group(2) or 0)
    fits = (np.abs(numbers) < 10.0 ** (precision - scale)).all()
    return values if fits and (np.round(numbers, scale) == numbers).all() else None


def _as_text_of(*types: type) -> Callable[[np.ndarray, str], np.ndarray | None]:
    """Values of exactly ``types`` (and None) as their text, which the database casts."""

    def convert(values: np.ndarray, sql_type: str) -> np.ndarray | None:
        if values.dtype != object:
            return None
        items = values.tolist()
        if not all(v is None or type(v) in types for v in items):
            return None
        return object_array([None if v is None else str(v) for v in items])

    return convert


def _as_texts(values: np.ndarray, sql_type: str) -> np.ndarray | None:
    """Text no longer than the type's length, if it has one."""
    if values.dtype != object or not all(type(v) is str for v in _present(values)):
        return None
    found = re.search(r"\(\s*(\d+)\s*\)", sql_type)
    longest = max((len(v) for v in _present(values)), default=0)
    return values if found is None or longest <= int(found.group(1)) else None


_WRITES: dict[str, Callable[[np.ndarray, str], np.ndarray | None]] = {
    "int": _as_integers,
    "bool": _as_booleans,
    "float": _as_floats,
    "decimal": _as_decimals,
    "date": _as_text_of(datetime.date),
    "timestamp": _as_text_of(datetime.datetime),
    "zoned": lambda values, sql_type: _as_text_of(datetime.datetime)(_in_utc(values), sql_type),
    "text": _as_texts,
}


def _in_utc(values: np.ndarray) -> np.ndarray:
    """Datetimes without a time zone (DuckDB's of a zoned column) as UTC's."""
    if values.dtype != object:
        return values
    return object_array(
        [
            v.replace(tzinfo=datetime.UTC)
            if type(v) is datetime.datetime and v.tzinfo is None
            else v
            for v in values.tolist()
        ]
    )


def _present(values: np.ndarray) -> list[Any]:
    return [v for v in values.tolist() if v is not None]


def _whole(values: np.ndarray) -> bool:
    return bool(np.isfinite(values).all() and (values == np.floor(values)).all())


def _in_range(items: list[int], sql_type: str) -> bool:
    words = re.findall(r"[a-z_0-9]+", sql_type.lower())
    bits = _INTEGER_BITS.get(words[0] if words else "", 64)
    low, high = (
        (0, 2**bits - 1) if "unsigned" in words else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    return all(low <= v <= high for v in items)


def _numbers(values: np.ndarray, items: list[Any]) -> np.ndarray:
    """Whole numbers and booleans as the write path takes them: floats (NULL as NaN) where
    they are exact, else their text (which the database casts)."""
    if values.dtype.kind in "biu":
        return values
    if all(abs(v) <= EXACT_FLOATS for v in items):
        return np.array([np.nan if v is None else float(v) for v in values.tolist()])
    return object_array([None if v is None or v != v else str(int(v)) for v in values.tolist()])


def _with_none(items: list[Any], missing: np.ndarray) -> np.ndarray:
    array = np.empty(len(missing), dtype=object)
    array[~missing] = items
    return array
