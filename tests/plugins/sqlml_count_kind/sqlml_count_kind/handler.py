"""TO COUNT's handler: the counts read from the database, written into the INTO table."""

from __future__ import annotations

from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml_count_kind.ir import CountStatement


def count(statement: CountStatement, context: Context) -> Outcome:
    """Each distinct value of the column and its number of rows, in the value's order."""
    column = statement.counted
    query = (
        f"SELECT {column} AS value, count(*) AS n FROM ({statement.select}) AS q "
        f"GROUP BY {column} ORDER BY {column}"
    )
    counts = context.datasource.read(query)
    context.datasource.write_table(statement.table, counts, False, context.token)
    into = ".".join(statement.table)
    return Outcome(summary=f"counted {len(counts['n'])} values of {column} into {into}")
