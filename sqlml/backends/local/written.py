"""Whether what a statement step wrote still exists: a resumed run skips a step only if so."""

from __future__ import annotations

from sqlml import ir
from sqlml.datasources import Datasource
from sqlml.errors import DatasourceError
from sqlml.models.store import ModelStore
from sqlml.statements import Effects, kind_of, resolve
from sqlml.workflow.core import CONTAINER, RESOURCE, SCRIPT, Step


def gone_output(step: Step, ds: Datasource) -> str | None:
    """An output of a statement step that no longer exists ("model m", "table t", "file
    f.png"), or None. Its outputs are what its kind declares it writes (its effects): the
    models, tables and files the statement names, and for standard SQL the table or view a
    CREATE makes; what it drops is not checked. Outputs gone are no matter when the kind
    says its work is kept otherwise (a search's trials: in their models)."""
    if step.template in (CONTAINER, SCRIPT, RESOURCE):
        return None
    statement = ir.from_dict(step.params)
    kind = kind_of(statement)
    gone = _gone(statement, kind.effects, ds)
    if gone is not None and kind.kept is not None and resolve(kind.kept)(statement, ds):
        return None
    return gone


def _gone(statement: ir.Statement, effects: Effects, ds: Datasource) -> str | None:
    """The first of the outputs ``effects`` name in ``statement`` that does not exist."""
    for model in effects.values(statement, effects.writes_models):
        if not ModelStore(ds).list_versions(model):
            return f"model {model}"
    for table in effects.values(statement, effects.writes_tables):
        if not ds.table_exists(table):
            return f"table {'.'.join(table)}"
    for file in effects.values(statement, effects.writes_files):
        if not ds.program_file(file).exists():
            return f"file {file}"
    return _gone_creation(statement.text, ds) if effects.standard_sql else None


def _gone_creation(sql: str, ds: Datasource) -> str | None:
    """The table or view a ``CREATE TABLE`` or ``CREATE VIEW`` made if it no longer exists,
    or None. It is looked up as the statement names it (quoted or not), so the database
    applies its own rules of case."""
    # Only a resumed run reads SQL here: the shell's first prompt does without sqlglot.
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        tree = sqlglot.parse_one(sql, read=ds.dialect)
    except (SqlglotError, RecursionError):  # too deeply nested for sqlglot's parser
        return None
    kind = str(tree.args.get("kind") or "").upper()
    if not isinstance(tree, exp.Create) or kind not in ("TABLE", "VIEW"):
        return None
    table = tree.this if isinstance(tree.this, exp.Table) else tree.this.find(exp.Table)
    if table is None:
        return None
    name = table.sql(dialect=ds.dialect)
    try:
        ds.execute(f"SELECT 1 FROM {name} WHERE 1 = 0")
    except DatasourceError:
        return f"{kind.lower()} {name}"
    return None
