"""Standard SQL read by the database's own parser, where sqlml has it in this process (DuckDB).

Reading a statement this way costs a fraction of a millisecond once DuckDB is loaded (a
DuckDB run loads it anyway), where sqlglot takes about 0.1 s to import. So a statement that
DuckDB's parser reads whole is taken as it is, and sqlglot is loaded only for what it alone
tells: a fault, explained and positioned in the program as ever (the check falls back to
sqlglot whenever DuckDB's parser does not read the text as one statement), the tables a
program's statements read and write, and the SELECT of an extended statement (which must
only read).
"""

from __future__ import annotations

import threading

_PARSER_LOCK = threading.Lock()  # DuckDB's default connection, shared by the threads


def statement_type(sql: str, dialect: str) -> str | None:
    """The type of the one statement ``sql`` holds as the database of ``dialect`` reads it
    (``"SELECT"`` for any query, ``"INSERT"``...), or None: no parser of that database here,
    or ``sql`` holds a syntax error, no statement or several."""
    if dialect != "duckdb":
        return None
    try:
        import duckdb
    except ImportError:
        return None
    try:
        with _PARSER_LOCK:
            statements = duckdb.extract_statements(sql)
    except duckdb.Error:
        return None
    if len(statements) != 1:
        return None
    return statements[0].type.name
