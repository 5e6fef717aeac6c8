"""Standard SQL read by the database's own parser, where sqlml has it in this process.

A datasource declares it (:meth:`sqlml.datasources.Datasource.statement_type`): reading a
statement so costs a fraction of a millisecond (DuckDB's, once DuckDB is loaded), where
sqlglot takes about 0.1 s to import. So a statement that the database's parser reads whole
is taken as it is, and sqlglot is loaded only for what it alone tells: a fault, explained
and positioned in the program as ever (the check falls back to sqlglot whenever the
database's parser does not read the text as one statement), the tables a program's
statements read and write, and the SELECT of an extended statement (which must only read).
"""

from __future__ import annotations

from sqlml.plugins import datasource_of_dialect


def statement_type(sql: str, dialect: str) -> str | None:
    """The type of the one statement ``sql`` holds as the database of ``dialect`` reads it
    (``"SELECT"`` for any query, ``"INSERT"``...), or None: no parser of that database here,
    or ``sql`` holds a syntax error, no statement or several."""
    source = datasource_of_dialect(dialect)
    return None if source is None else source.statement_type(sql)
