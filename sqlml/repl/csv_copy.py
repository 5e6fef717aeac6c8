"""``\\copy``: rows between a CSV file of the machine the shell runs on and the database, as
psql's client-side copy (the database server never reads or writes the file).

    \\copy TABLE [(COLUMN, ...)] FROM FILE [CSV] [HEADER]
    \\copy TABLE | (QUERY) TO FILE [CSV] [HEADER]

An empty field is NULL; HEADER skips the first line (FROM) or writes the names (TO).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.repl.session import Session

USAGE = "\\copy TABLE [(COLUMN, ...)] FROM FILE [CSV] [HEADER], or \\copy TABLE|(QUERY) TO FILE"
_COPY = re.compile(
    r"(?P<source>\(.*\)|[^\s(]+)\s*(?:\((?P<columns>[^)]*)\))?\s+(?P<direction>TO|FROM)\s+"
    r"(?P<file>'(?:[^']|'')*'|\S+)(?P<options>.*)",
    re.IGNORECASE | re.DOTALL,
)
_OPTIONS = {"CSV", "HEADER", "WITH", "FORMAT", "(", ")", ",", "TRUE"}
INSERT_ROWS = 500  # rows of one INSERT statement


def copy_rows(session: Session, argument: str) -> str:
    """Do what ``\\copy ARGUMENT`` says; what it did, as psql says it (``COPY 3``)."""
    found = _COPY.fullmatch(argument.strip())
    if found is None:
        raise SqlmlError(f"cannot read \\copy {argument}", hint=f"write {USAGE}")
    options = set(re.findall(r"\w+|[(),]", found["options"].upper()))
    if not options <= _OPTIONS:
        others = ", ".join(sorted(options - _OPTIONS))
        raise SqlmlError(
            f"\\copy reads and writes CSV; it does not take {others}",
            hint=f"write {USAGE}",
        )
    file = Path(found["file"].strip("'").replace("''", "'")).expanduser()
    header = "HEADER" in options
    if found["direction"].upper() == "TO":
        if found["columns"]:
            raise SqlmlError("\\copy ... TO takes a table or a (QUERY), not a list of columns")
        return _to_file(session, found["source"], file, header)
    if found["source"].startswith("("):
        raise SqlmlError("\\copy ... FROM takes a table, not a query", hint=f"write {USAGE}")
    columns = [c.strip() for c in found["columns"].split(",")] if found["columns"] else None
    return _from_file(session, found["source"], columns, file, header)


def _to_file(session: Session, source: str, file: Path, header: bool) -> str:
    query = source[1:-1] if source.startswith("(") else f"SELECT * FROM {source}"
    result = session.query(query)
    if result is None:
        raise SqlmlError(f"{source} returns no rows to copy", hint="give a table or a (SELECT)")
    try:
        with file.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            if header:
                writer.writerow(result.columns)
            writer.writerows(["" if v is None else v for v in row] for row in result.rows)
    except OSError as error:
        raise SqlmlError(f"cannot write {file}: {error}") from None
    return f"COPY {len(result.rows)}"


def _from_file(
    session: Session, table: str, columns: list[str] | None, file: Path, header: bool
) -> str:
    try:
        with file.open(newline="", encoding="utf-8-sig") as source:
            rows = [[v if v != "" else None for v in row] for row in csv.reader(source)]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise SqlmlError(f"cannot read {file}: {error}") from None
    rows = rows[1:] if header else rows
    datasource = session.datasource
    named = f" ({', '.join(columns)})" if columns else ""
    for start in range(0, len(rows), INSERT_ROWS):
        batch = rows[start : start + INSERT_ROWS]
        values = ", ".join(f"({', '.join([datasource.param] * len(row))})" for row in batch)
        params = [value for row in batch for value in row]
        session.query(f"INSERT INTO {table}{named} VALUES {values}", params)
    session.refresh()
    return f"COPY {len(rows)}"
