"""DuckDB's own parser, in this process (:meth:`.source.DuckDBSource.statement_type`).

Reading a statement this way costs a fraction of a millisecond once DuckDB is loaded (a
DuckDB run loads it anyway), where sqlglot takes about 0.1 s to import. So a statement that
DuckDB's parser reads whole is taken as it is, and sqlglot is loaded only for what it alone
tells: a fault, explained and positioned in the program as ever (the check falls back to
sqlglot whenever DuckDB's parser does not read the text as one statement), the tables a
program's statements read and write, and the SELECT of an extended statement (which must
only read).

DuckDB's parser lives in a database: its default one, in memory, costs about 20 ms to
create. A run on a DuckDB file tells :func:`parse_on` that file, and the parser then uses a
connection to it, whose database the run's own connections share (DuckDB keeps one database
per file in a process) until the run has opened it (:func:`opened`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

_PARSER_LOCK = threading.Lock()  # the parser's connection, shared by the threads
_file: str | None = None  # the DuckDB file the program runs on (parse_on)
_held: Any = None  # a connection to it, open until the run opens the file


def statement_type(sql: str) -> str | None:
    """The type of the one statement ``sql`` holds as DuckDB reads it (``"SELECT"`` for any
    query, ``"INSERT"``...), or None: DuckDB is not installed, or ``sql`` holds a syntax
    error, no statement or several."""
    try:
        import duckdb
    except ImportError:
        return None
    try:
        with _PARSER_LOCK:
            statements = _parser(duckdb).extract_statements(sql)
    except duckdb.Error:
        return None
    if len(statements) != 1:
        return None
    return statements[0].type.name


def parse_on(path: str | None) -> None:
    """Read statements with a connection to the DuckDB file at ``path``, which the program is
    about to run on (None, or ``:memory:``, of which each connection has its own: with
    DuckDB's default database). A file that does not exist yet is not created for it."""
    global _file
    path = None if path == ":memory:" else path
    with _PARSER_LOCK:
        if path != _file:
            _close()
            _file = path


def opened(path: str) -> None:
    """The run has opened the DuckDB file at ``path``: the parser's connection to it closes,
    the database living on in the run's; the parser reopens it should it read again."""
    with _PARSER_LOCK:
        if path == _file:
            _close()


def _parser(duckdb: Any) -> Any:
    """What reads statements: a connection to the run's DuckDB file where one is given and
    can be opened now (else the module, which reads with DuckDB's default database)."""
    global _file, _held
    if _held is None and _file is not None and Path(_file).is_file():
        try:
            _held = duckdb.connect(_file)
        except duckdb.Error:  # held by another process, not a database...: the run will say
            _file = None
    return duckdb if _held is None else _held


def _close() -> None:
    global _held
    if _held is not None:
        _held.close()
        _held = None
