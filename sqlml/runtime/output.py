"""Show query results as aligned tables, CSV or JSON, on a stream or in files of their own."""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sqlml.datasources import ResultSet
from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.ir import Statement

FORMATS = ("table", "csv", "json")
EXTENSIONS = {"table": "txt", "csv": "csv", "json": "json"}  # of a result's file, by format


def render(result: ResultSet, fmt: str = "table") -> str:
    """``result`` in one of :data:`FORMATS`, ending with a newline.

    A table shows a value with line breaks as psql does: its lines one under the other in
    its column, each but the last ending with ``+``. CSV quotes such values, JSON escapes them.
    """
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buffer.getvalue()
    if fmt == "json":
        rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        return json.dumps(rows, default=str) + "\n"
    return _table(result)


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    return text.replace("\r\n", "\n") if "\r" in text else text


def _width(text: str) -> int:
    """The width of a cell: that of its longest line."""
    return max(map(len, text.split("\n"))) if "\n" in text else len(text)


def _table(result: ResultSet) -> str:
    header = [_cell(name) for name in result.columns]
    cells = [[_cell(value) for value in row] for row in result.rows]
    columns = zip(header, *cells, strict=True)
    widths = [max(map(_width, column)) for column in columns]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in result.rows)
        for i in range(len(result.columns))
    ]

    def pad(text: str, width: int, right: bool) -> str:
        return text.rjust(width) if right else text.ljust(width)

    def lines(row: list[str]) -> list[str]:
        """A row's lines: each cell's i-th line padded to its column, ``+`` if more follow."""
        if not any("\n" in text for text in row):
            padded = map(pad, row, widths, numeric)
            return [" " + " | ".join(padded).rstrip()]
        split = [text.split("\n") for text in row]
        shown = []
        for i in range(max(map(len, split))):
            parts = (
                pad(cell[i] if i < len(cell) else "", width, right)
                + ("+" if i < len(cell) - 1 else " ")
                for cell, width, right in zip(split, widths, numeric, strict=True)
            )
            shown.append(" " + "| ".join(parts).rstrip())
        return shown

    count = len(result.rows)
    text = [
        *lines(header),
        "-" + "-+-".join("-" * width for width in widths) + "-",
        *(line for row in cells for line in lines(row)),
        f"({count} row{'s' if count != 1 else ''})",
    ]
    return "\n".join(text) + "\n"


class ResultStream:
    """Results printed on ``stream`` (default: stdout) one after another, in the format
    ``fmt``. In CSV an empty line (never a CSV record of sqlml's: an empty value is ``""``)
    comes before each result after the first, and a note on stderr says so at the second.
    In JSON a result written through :meth:`of` is tagged with its program and statement."""

    def __init__(self, fmt: str, stream: TextIO | None = None) -> None:
        self._fmt, self._stream = fmt, stream
        self._printed = 0

    def of(self, source: str, statements: Sequence[Statement]) -> Callable[[str, ResultSet], None]:
        """What writes the results of the ``statements`` of the program ``source``: in JSON,
        each a line ``{"file", "statement", "line", "column", "rows"}``."""
        where = {statement.id: (statement.line, statement.column) for statement in statements}

        def write(statement: str, result: ResultSet) -> None:
            line, column = where.get(statement, (None, None))
            tag = {"file": source, "statement": statement, "line": line, "column": column}
            self.write(statement, result, tag)

        return write

    def write(self, statement: str, result: ResultSet, tag: dict[str, Any] | None = None) -> None:
        """Print the result of ``statement`` (its step id); in JSON, as ``tag`` with the
        rows under ``rows`` when tagged."""
        stream = self._stream or sys.stdout
        if self._fmt == "csv" and self._printed:
            stream.write("\n")
            if self._printed == 1:
                print(
                    f"sqlml: note: the result of {statement} is a second CSV table on stdout, "
                    "after an empty line; --output-dir DIR writes each result to a CSV file of "
                    "its own",
                    file=sys.stderr,
                    flush=True,
                )
        if self._fmt == "json" and tag is not None:
            rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
            stream.write(json.dumps({**tag, "rows": rows}, default=str) + "\n")
        else:
            stream.write(render(result, self._fmt))
        stream.flush()
        self._printed += 1


@dataclass(frozen=True)
class ResultFiles:
    """Each result in a file of its own, ``DIRECTORY/PREFIX<statement id>.<extension>``, in
    the format ``fmt`` (:data:`EXTENSIONS` gives its extension)."""

    directory: Path
    prefix: str
    fmt: str

    def path(self, statement: str) -> Path:
        """The file of the result of the statement whose step id is ``statement``."""
        return self.directory / f"{self.prefix}{statement}.{EXTENSIONS[self.fmt]}"

    def write(self, statement: str, result: ResultSet) -> Path:
        """Write ``result`` to its file (atomically: whole or not at all); its path."""
        path = self.path(statement)
        try:
            write_atomically(path, render(result, self.fmt))
        except OSError as error:
            raise SqlmlError(
                f"cannot write the result of {statement} to {path}: {error.strerror or error}",
                hint="give an --output-dir that can be written to and has room",
            ) from None
        return path


def output_dir(path: str) -> Path:
    """The folder ``--output-dir`` names, made if missing; raises SqlmlError if it cannot be."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SqlmlError(
            f"cannot make the --output-dir folder {path}: {error.strerror or error}",
            hint="give a folder that exists or can be made, and can be written to",
        ) from None
    return folder


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in its folder, then rename it: a
    reader sees the old file or the whole new one, never a part."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # os.open's mode, unlike mkstemp's 0600, lets the umask decide, as for any new file
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
