"""The words the shell completes and highlights as keywords."""

from __future__ import annotations

# sqlml's own: the extended clauses, model statements and feature column functions.
SQLML_KEYWORDS = (
    "TO", "TRAIN", "PREDICT", "EVALUATE", "EXPLAIN", "WITH", "COLUMN", "FOR", "LABEL",
    "USING", "INTO", "SHOW", "MODELS", "MODEL", "DESCRIBE", "DROP", "IF", "EXISTS",
    "NUMERIC", "DENSE", "SPARSE", "CATEGORY_ID", "CATEGORY_HASH", "BUCKET", "EMBEDDING",
    "INDICATOR", "CROSS",
)  # fmt: skip

# Standard SQL's most used words.
SQL_KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "AS",
    "DISTINCT", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN", "CASE", "WHEN",
    "THEN", "ELSE", "END", "JOIN", "LEFT", "RIGHT", "INNER", "OUTER", "FULL", "ON", "UNION",
    "ALL", "INSERT", "VALUES", "UPDATE", "SET", "DELETE", "CREATE", "TABLE", "VIEW", "ALTER",
    "ASC", "DESC", "COUNT", "SUM", "AVG", "MIN", "MAX", "CAST", "TRUE", "FALSE",
)  # fmt: skip

KEYWORDS = tuple(dict.fromkeys(SQL_KEYWORDS + SQLML_KEYWORDS))
