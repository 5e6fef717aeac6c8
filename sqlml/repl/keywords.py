"""The words the shell completes and highlights as keywords."""

from __future__ import annotations

from sqlml.grammar.parser import keywords
from sqlml.ir import FEATURE_KINDS

# The feature column functions of COLUMN clauses ("auto" is a plain column name, not one).
FEATURE_FUNCTIONS = tuple(kind.upper() for kind in FEATURE_KINDS if kind != "auto")

# sqlml's own: the grammar's keywords and the feature column functions.
SQLML_KEYWORDS = keywords() + FEATURE_FUNCTIONS

# Standard SQL's most used words.
SQL_KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "AS",
    "DISTINCT", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN", "CASE", "WHEN",
    "THEN", "ELSE", "END", "JOIN", "LEFT", "RIGHT", "INNER", "OUTER", "FULL", "ON", "UNION",
    "ALL", "INSERT", "VALUES", "UPDATE", "SET", "DELETE", "CREATE", "TABLE", "VIEW", "ALTER",
    "ASC", "DESC", "COUNT", "SUM", "AVG", "MIN", "MAX", "CAST", "TRUE", "FALSE",
)  # fmt: skip

KEYWORDS = tuple(dict.fromkeys(SQL_KEYWORDS + SQLML_KEYWORDS))
