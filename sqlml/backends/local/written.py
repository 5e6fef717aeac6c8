"""Whether what a statement step wrote still exists: a resumed run skips a step only if so."""

from __future__ import annotations

from sqlml import ir
from sqlml.errors import DatasourceError
from sqlml.models.store import ModelStore
from sqlml.runtime.datasource import Datasource
from sqlml.workflow.core import CONTAINER, RESOURCE, SCRIPT, Step


def gone_output(step: Step, ds: Datasource) -> str | None:
    """An output of a statement step that no longer exists ("model m", "table t"), or
    None: the model (and trials table) a TO TRAIN writes, the table a TO PREDICT, TO
    EVALUATE or TO EXPLAIN writes, the table or view a CREATE makes, each as the
    statement names it. Statements that drop or rename are not checked."""
    if step.template in (CONTAINER, SCRIPT, RESOURCE):
        return None
    statement = ir.from_dict(step.params)
    match statement:
        case ir.TrialStatement():  # the search drops its trials' models once done with them
            gone = _gone_training(statement, ds)
            return None if gone is None or _trials_kept(statement, ds) else gone
        case ir.TrainStatement():
            return _gone_training(statement, ds)
        case ir.PredictStatement() | ir.EvaluateStatement() | ir.ExplainStatement():
            return _gone_table(statement.table, ds) if statement.table else None
        case ir.SqlStatement():
            return _gone_creation(statement.text, ds)
    return None


def _gone_training(statement: ir.TrainStatement, ds: Datasource) -> str | None:
    if not ModelStore(ds).list_versions(statement.model):
        return f"model {statement.model}"
    if isinstance(statement, ir.SearchStatement):
        return _gone_table(statement.search["trials_table"], ds)
    return None


def _gone_table(table: list[str], ds: Datasource) -> str | None:
    return None if ds.table_exists(table) else f"table {'.'.join(table)}"


def _trials_kept(statement: ir.TrialStatement, ds: Datasource) -> bool:
    """Whether trial models of the search are stored (its last step failed)."""
    from sqlml.runtime.search import trial_model

    prefix = trial_model(statement.model, "")
    return any(name.startswith(prefix) for name, _, _ in ModelStore(ds).list())


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
