"""Workflow sql, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('sql')

s1_create = workflow.add(steps.sql(
    ir.SqlStatement(
        id='s1-create',
        text='CREATE TABLE houses AS SELECT 1 AS id, 120.0 AS area, 3 AS rooms, 250000.0 AS price',
        line=2,
        column=1,
        params={},
    )
))
s2_select = workflow.add(steps.sql(
    ir.SqlStatement(
        id='s2-select',
        text='SELECT id, price FROM houses WHERE area > 100',
        line=3,
        column=1,
        params={},
    ),
    after=[s1_create],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
