"""How the analysis compares table names: by their last part, lower-cased (``main.T`` and
``t`` are one table), since the default schema and the database's case rules are not known
before a program runs. Plain text work: no SQL parser is loaded."""

from __future__ import annotations


def same_table(a: str, b: str) -> bool:
    """Whether two table names (dotted) name one table, as the analysis compares them."""
    return name_key(a.lower()) == name_key(b.lower())


def name_key(name: str) -> str:
    """What a table or model is compared by: its last name part."""
    return name.rsplit(".", 1)[-1]
