"""What a TO RUN program uses: the selected rows, its parameters, and the tables it writes.

A script or an image's program imports it::

    from sqlml.statements.run import api

    rows = api.rows()                    # {"column": numpy array, ...}
    bins = api.params().get("bins", 10)  # the WITH values, typed as written
    api.write("binned", {"bucket": ..., "rows": ...})  # one of the INTO tables

A Python function needs none of it: it is called with the rows and the WITH values as keyword
arguments, and returns ``{table: columns}``.

Rows travel as Parquet files, written and read with DuckDB (no other library): the rows of
the SELECT in one file, each INTO table the program writes in one file. NULL is NaN in a
column of floats and None in the others: an integer or boolean column holding a NULL is
Python ``int`` or ``bool`` values and None (exact, where floats would round big integers);
text is ``str``; dates are ``datetime.date``, timestamps ``datetime.datetime``. The file
paths and parameters come in a JSON file named by ``$SQLML_RUN`` (:data:`SPEC_ENV`), which
sqlml writes for each run.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

SPEC_ENV = "SQLML_RUN"
# The Python values an INTO table's column of objects may hold (None too).
HELD = (type(None), str, bytes, bool, int, float, decimal.Decimal, datetime.date,
        datetime.time, datetime.timedelta)  # fmt: skip


class RunError(Exception):
    """The program used this API wrongly (its message says how); it ends the program."""


@cache
def spec() -> dict[str, Any]:
    """This run's description: ``input`` (the rows' file), ``output`` (the folder of the
    tables' files), ``params``, ``tables`` (the INTO tables, dotted) and ``select``."""
    path = os.environ.get(SPEC_ENV)
    if not path:
        raise RunError(
            f"${SPEC_ENV} is not set: this program is meant to be run by a TO RUN statement"
        )
    return json.loads(Path(path).read_text(encoding="utf-8"))


def rows() -> dict[str, np.ndarray]:
    """The rows of the statement's SELECT, as columns."""
    return read_columns(Path(spec()["input"]))


def relation(connection: Any = None) -> Any:
    """The rows as a DuckDB relation (on ``connection``, or DuckDB's default one)."""
    import duckdb

    return (connection or duckdb).read_parquet(spec()["input"])


def params() -> dict[str, Any]:
    """The statement's WITH values but sqlml's own (``run.*``, ``output.*``)."""
    return dict(spec()["params"])


def tables() -> list[str]:
    """The INTO tables, dotted as the statement names them."""
    return list(spec()["tables"])


def write(table: str, columns: Mapping[str, Sequence[Any] | np.ndarray]) -> None:
    """Write ``columns`` (each a sequence of one value per row) as ``table``, one of the
    statement's INTO tables; written again, the last columns win. sqlml puts them into the
    database once the program has ended well."""
    names = [name.lower() for name in tables()]
    if table.lower() not in names:
        into = ", ".join(tables()) or "no table"
        raise RunError(f"write({table!r}): the statement's INTO names {into}")
    arrays = {name: as_array(values) for name, values in columns.items()}
    held(table, arrays)
    write_columns(arrays, output_file(Path(spec()["output"]), names.index(table.lower())))


def held(table: str, columns: Mapping[Any, np.ndarray]) -> None:
    """A :class:`RunError` naming the column of ``table`` a database cannot hold as it is:
    a name that is not text, empty, holds NUL or differs from another only in case (which
    every database but PostgreSQL takes as the same), or a value of another type than
    :data:`HELD` (a set, a dict, a list, any other object)."""
    seen: dict[str, str] = {}
    for name, values in columns.items():
        where = f"write({table!r}): the column {name!r}"
        if not isinstance(name, str) or not name or "\0" in name:
            raise RunError(f"{where}: a column's name is non-empty text without NUL")
        if name.lower() in seen:
            raise RunError(
                f"{where}: its name differs from {seen[name.lower()]!r} only in case, and a "
                "database takes them as one name"
            )
        seen[name.lower()] = name
        if values.dtype.kind not in "biufMmO":
            raise RunError(f"{where}: a database holds no values of type {values.dtype}")
        if values.dtype.kind == "O":
            wrong = next((v for v in values.tolist() if not isinstance(v, HELD)), None)
            if wrong is not None:
                raise RunError(
                    f"{where}: a database holds no {type(wrong).__name__} value "
                    f"({_shown(wrong)}); give it as text, numbers, dates or None"
                )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def output_file(folder: Path, index: int) -> Path:
    """The file of the ``index``-th INTO table."""
    return folder / f"table_{index}.parquet"


def as_array(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    """``values`` as a 1-D array: numbers, booleans, or objects (text, dates, None)."""
    if isinstance(values, np.ndarray):
        array = values
    else:
        items = list(values)
        try:
            array = np.asarray(items)
        except ValueError:  # lists of several lengths
            array = np.empty(0, dtype=object)
        if array.ndim != 1 or array.dtype.kind not in "biuf" or len(array) != len(items):
            array = np.empty(len(items), dtype=object)
            for index, value in enumerate(items):  # numpy's numbers as Python's
                array[index] = value.item() if isinstance(value, np.generic) else value
    if array.ndim != 1:
        raise RunError(f"a column holds one value per row, not an array of shape {array.shape}")
    if isinstance(array, np.ma.MaskedArray):
        array = masked_to_plain(array)
    if array.dtype.kind == "M":
        array = _dates(array, array.dtype == np.dtype("datetime64[D]"))
    elif array.dtype.kind in "mUS":
        array = array.astype(object)
    return array


def write_columns(columns: Mapping[str, np.ndarray], path: Path) -> None:
    """Write ``columns`` (of equal lengths) into the Parquet file ``path``."""
    import duckdb

    lengths = {name: len(values) for name, values in columns.items()}
    if not lengths:
        raise RunError("a table needs at least one column")
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}: {count}" for name, count in lengths.items())
        raise RunError(f"the columns of a table hold as many rows each, not {shown}")
    connection = duckdb.connect()
    try:
        connection.register("columns", dict(columns))
        connection.execute("COPY (SELECT * FROM columns) TO ? (FORMAT parquet)", [str(path)])
    finally:
        connection.close()


def read_columns(path: Path) -> dict[str, np.ndarray]:
    """The columns of the Parquet file ``path``: NULL as NaN (numbers) or None."""
    import duckdb

    connection = duckdb.connect()
    try:
        data = connection.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchnumpy()
        described = connection.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)])
        types = {row[0]: row[1] for row in described.fetchall()}
    finally:
        connection.close()
    return {name: _plain(values, types.get(name, "")) for name, values in data.items()}


def _plain(values: np.ndarray, sql_type: str) -> np.ndarray:
    masked = isinstance(values, np.ma.MaskedArray)
    if values.dtype.kind != "M":
        array = masked_to_plain(values) if masked else values
        if sql_type == "BLOB":  # DuckDB gives bytearray: bytes, as the datasources hold them
            array = np.array([None if v is None else bytes(v) for v in array], dtype=object)
        return array
    array = _dates(np.asarray(values.data if masked else values), sql_type == "DATE")
    if masked:
        array[np.asarray(values.mask)] = None
    if sql_type == "TIMESTAMP WITH TIME ZONE":  # DuckDB gives the UTC time, without its zone
        array[:] = [v if v is None else v.replace(tzinfo=datetime.UTC) for v in array.tolist()]
    return array


def masked_to_plain(values: np.ma.MaskedArray) -> np.ndarray:
    """A masked array as a program gets it: masked values NaN (floats) or None (the others:
    integers and booleans then Python values, which keep them exact)."""
    if not values.mask.any():
        return np.asarray(values.data)
    if values.dtype.kind == "f":
        return values.astype(np.float64).filled(np.nan)
    if values.dtype.kind == "M":
        array = _dates(values.data)
    else:
        array = np.empty(len(values), dtype=object)
        array[:] = values.data.tolist()  # Python ints and booleans
    array[np.asarray(values.mask)] = None
    return array


def _dates(values: np.ndarray, dates_only: bool = False) -> np.ndarray:
    """datetime64 values as Python dates (``dates_only``) or datetimes, NaT as None."""
    missing = np.isnat(values)
    unit = "datetime64[D]" if dates_only else "datetime64[us]"
    array = values.astype(unit).astype(object)
    array[missing] = None
    return array
