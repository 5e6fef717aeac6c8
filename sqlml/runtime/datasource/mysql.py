"""MySQL and MariaDB through pymysql."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import pymysql
from pymysql.constants import FIELD_TYPE

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource.base import (
    Columns,
    Datasource,
    ResultSet,
    fetch_columns,
    object_array,
    python_values,
    returns_rows,
)
from sqlml.runtime.datasource.url import DatasourceURL

_INTEGER_TYPES = {
    FIELD_TYPE.TINY,
    FIELD_TYPE.SHORT,
    FIELD_TYPE.LONG,
    FIELD_TYPE.LONGLONG,
    FIELD_TYPE.INT24,
    FIELD_TYPE.YEAR,
}
_FLOAT_TYPES = {FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE, FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL}


class MySQLSource(Datasource):
    dialect = "mysql"
    param = "%s"
    current_schema = "DATABASE()"
    fingerprint_sql = "CHECKSUM TABLE {table}"
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "text": "LONGTEXT",
        "blob": "LONGBLOB",
        "key": "VARCHAR(255)",
    }

    def __init__(self, url: DatasourceURL) -> None:
        super().__init__(url)
        try:
            self._con = pymysql.connect(
                host=url.host,
                port=url.port or 3306,
                user=url.user or None,
                password=url.password,
                database=url.path,
                charset="utf8mb4",
                autocommit=True,
                connect_timeout=10,
            )
        except pymysql.MySQLError as error:
            raise DatasourceError(
                f"cannot connect to {url}: {_message(error)}",
                hint="check that the server is running and that the URL given with "
                "--datasource or SQLML_DATASOURCE is right",
            ) from None

    def quote(self, parts: Sequence[str]) -> str:
        return ".".join("`" + part.replace("`", "``") + "`" for part in parts)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            with self._con.cursor() as cursor:
                cursor.execute(sql, tuple(params) or None)
                if not returns_rows(sql) or cursor.description is None:
                    return None
                return ResultSet([d[0] for d in cursor.description], list(cursor.fetchall()))
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def read(self, select: str) -> Columns:
        try:
            with self._con.cursor(pymysql.cursors.SSCursor) as cursor:
                cursor.execute(select)
                type_codes = [d[1] for d in cursor.description]
                names, chunks = fetch_columns(cursor)
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None
        return {
            name: _array(values, code)
            for name, values, code in zip(names, chunks, type_codes, strict=True)
        }

    def _insert(self, table: str, columns: Columns) -> None:
        placeholders = ", ".join([self.param] * len(columns))
        rows = list(zip(*(python_values(values) for values in columns.values()), strict=True))
        try:
            with self._con.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {table} VALUES ({placeholders})", rows)
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def _swap(self, staging: list[str], target: list[str]) -> None:
        *schema, name = target
        old = [*schema, f"{name}__sqlml_old_{staging[-1][-12:]}"]
        if self.table_exists(target):
            self.execute(
                f"RENAME TABLE {self.quote(target)} TO {self.quote(old)}, "
                f"{self.quote(staging)} TO {self.quote(target)}"
            )
            self.execute(f"DROP TABLE {self.quote(old)}")
        else:
            self.execute(f"RENAME TABLE {self.quote(staging)} TO {self.quote(target)}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._con.begin()
        try:
            yield
        except BaseException:
            self._con.rollback()
            raise
        self._con.commit()

    def close(self) -> None:
        self._con.close()


def _message(error: pymysql.MySQLError) -> str:
    args = error.args
    return str(args[1]) if len(args) > 1 else str(error)


def _array(values: list[Any], type_code: int) -> np.ndarray:
    if type_code in _INTEGER_TYPES and None not in values:
        return np.array(values, dtype=np.int64)
    if type_code in _INTEGER_TYPES or type_code in _FLOAT_TYPES:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return object_array(values)
