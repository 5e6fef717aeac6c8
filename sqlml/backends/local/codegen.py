"""Emit a workflow as a readable Python program that uses sqlml's step zoo."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import sqlml
from sqlml import ir
from sqlml.datasources.url import DEFAULT_DIALECT
from sqlml.plan import plan


def to_python(
    statements: Sequence[ir.Statement],
    name: str,
    base_dir: str = ".",
    dialect: str = DEFAULT_DIALECT,
) -> str:
    """A program that builds the workflow and, run as a script, executes it.

    Each step waits for the statements it depends on (the program's dependency DAG, standard
    SQL read in sqlglot's ``dialect``); independent ones run in parallel.
    """
    lines = [
        f'"""Workflow {name}, compiled by sqlml {sqlml.__version__}.',
        "",
        "Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]",
        '"""',
        "",
        "from sqlml.interrupted import loading",
        "",
        "with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback",
        "    from sqlml import ir, steps",
        "    from sqlml.workflow import Workflow",
        "    from sqlml.workflow_cli import main",
        "",
        f"workflow = Workflow({name!r})",
        "",
    ]
    for planned in plan(statements, dialect):
        waits = ", ".join(map(_variable, planned.after))
        after = f",\n    after=[{waits}]," if waits else ""
        variable, constructor = _variable(planned.id), _constructor(planned.statement)
        if planned.fans_out:  # adds its own steps (a search: trials and a fan-in)
            lines.append(f"{variable} = steps.{planned.step}(")
            lines.append(f"    workflow,\n    {constructor}{after}")
            lines.append(")")
            continue
        lines.append(f"{variable} = workflow.add(steps.{planned.step}(")
        lines.append(f"    {constructor}{after}")
        lines.append("))")
    lines += [
        "",
        'if __name__ == "__main__":',
        f"    raise SystemExit(main(workflow, base_dir={base_dir!r}))",
        "",
    ]
    return "\n".join(lines)


def _constructor(statement: ir.Statement) -> str:
    """``ir.X(...)`` of the fields the statement's JSON holds (those it leaves out default)."""
    kept = statement.to_dict()
    fields = [
        f"        {field.name}={_literal(getattr(statement, field.name))},"
        for field in dataclasses.fields(statement)
        if field.name in kept
    ]
    return "\n".join([f"ir.{type(statement).__name__}(", *fields, "    )"])


def _literal(value: object) -> str:
    """Python source for a field's value; IR dataclasses inside it (features) as ``ir.X(...)``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(
            f"{field.name}={_literal(getattr(value, field.name))}"
            for field in dataclasses.fields(value)
        )
        return f"ir.{type(value).__name__}({fields})"
    if isinstance(value, list):
        return "[" + ", ".join(map(_literal, value)) + "]"
    return repr(value)


def _variable(step_id: str) -> str:
    return re.sub(r"\W", "_", step_id)
