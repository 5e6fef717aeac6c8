"""No module outside ``sqlml/datasources/`` names a database: what differs by database is
declared by its datasource (``sqlml.datasources.Datasource``'s SQL and settings, overridden
in ``sqlml/datasources/<name>/``) and asked for, never chosen by a dialect's or a scheme's
name. Identifiers and string literals count; comments and docstrings do not (they may tell
what a database does). Nor does a module outside import a datasource's folder.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from sqlml.datasources import url
from sqlml.plugins import DATASOURCES
from sqlml.semantics.analyze import DEFAULT_DIALECT

PACKAGE = Path(__file__).resolve().parent.parent / "sqlml"
DATASOURCES_FOLDER = PACKAGE / "datasources"
FOLDERS = sorted(
    path.name for path in DATASOURCES_FOLDER.iterdir() if (path / "source.py").is_file()
)
NAMES = re.compile(r"duckdb|mysql|mariadb|sqlite|postgres|(?<![a-z0-9])pg_", re.IGNORECASE)

# (module, the name it holds) -> why it may. Reviewed: keep it short.
ALLOWED = {
    ("plugins.py", "duckdb"): "the registry lists the built-in datasources first, in order",
    ("plugins.py", "mysql"): "the registry lists the built-in datasources first, in order",
    ("plugins.py", "sqlite"): "the registry lists the built-in datasources first, in order",
    ("plugins.py", "postgres"): "the registry lists the built-in datasources first, in order",
    ("cli.py", "mysql"): "--datasource's help shows an example of a server's URL",
    ("repl/meta_commands.py", "duckdb"): "\\c's hint shows an example URL",
    ("semantics/analyze.py", "duckdb"): "the default dialect, below the datasources "
    "(sqlml.datasources.url.DEFAULT_DIALECT's, tested below)",
    ("statements/run/analysis.py", "mysql"): "run.datasource's description (docs/attributes.md) "
    "names the drivers' password variables",
    ("statements/run/api.py", "duckdb"): "TO RUN's Parquet files are written and read with "
    "the DuckDB library, not a datasource",
    ("statements/run/handler/__init__.py", "duckdb"): "TO RUN's Parquet files are written "
    "and read with the DuckDB library, not a datasource",
}


def _outside() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(DATASOURCES_FOLDER)
    ]


def _docstrings(tree: ast.Module) -> set[tuple[int, int]]:
    """Where the docstrings of ``tree``'s module, classes and functions start."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add((first.lineno, first.col_offset))
    return found


def named(text: str) -> Iterator[tuple[int, str, str]]:
    """(line, database name lower-cased, the token) of each name of a database in ``text``'s
    identifiers and string literals but its docstrings."""
    docstrings = _docstrings(ast.parse(text))
    kinds = {tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in kinds or token.start in docstrings:
            continue
        for match in NAMES.finditer(token.string):
            yield token.start[0], match.group(0).lower(), token.string


def folder_imports(text: str) -> Iterator[tuple[int, str]]:
    """(line, module) of each import of a datasource's folder (``sqlml.datasources.<name>``)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            # ``from sqlml.datasources import duckdb`` imports the folder too
            modules = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["sqlml", "datasources"] and len(parts) > 2 and parts[2] in FOLDERS:
                yield node.lineno, ".".join(parts[:3])


def test_no_module_outside_the_datasources_names_a_database():
    found, used = [], set()
    for path in _outside():
        module = path.relative_to(PACKAGE).as_posix()
        for line, name, token in named(path.read_text(encoding="utf-8")):
            if (module, name) in ALLOWED:
                used.add((module, name))
            else:
                found.append(f"sqlml/{module}:{line}: {name} in {token[:80]}")
    assert found == [], "ask the datasource (or its class) instead:\n" + "\n".join(found)
    assert sorted(set(ALLOWED) - used) == [], "allowed but no longer needed"


def test_no_module_outside_the_datasources_imports_a_datasource_s_folder():
    found = [
        f"sqlml/{path.relative_to(PACKAGE).as_posix()}:{line}: {module}"
        for path in _outside()
        for line, module in folder_imports(path.read_text(encoding="utf-8"))
    ]
    assert FOLDERS, "no datasource folders found"
    assert found == [], "find the class through sqlml.datasources instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('x = "duckdb:///a.duckdb"', ["duckdb", "duckdb"]),
        ("if dialect == 'postgres': pass", ["postgres"]),
        ("from sqlite3 import connect", ["sqlite"]),
        ('query = "SELECT 1 FROM pg_class"', ["pg_"]),
        ('f"{MYSQL_PWD}"', ["mysql"]),
        ('"""DuckDB, in a docstring."""\n# MySQL, in a comment\nx = "jpg_file"', []),
    ],
)
def test_names_are_found_in_identifiers_and_literals_only(text, expected):
    assert [name for _, name, _ in named(text)] == expected


def test_a_folder_import_is_found():
    text = "from sqlml.datasources.duckdb import parser\nfrom sqlml.datasources import base\n"
    assert list(folder_imports(text)) == [(1, "sqlml.datasources.duckdb")]


def test_the_default_dialect_is_the_default_datasource_s():
    default = DATASOURCES.claimant(url.DEFAULT_URL.partition(":")[0])
    assert default is not None
    assert DEFAULT_DIALECT == url.DEFAULT_DIALECT == default.dialect
