"""Workflow assert, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('assert')

s1_assert_select_count_from_houses_0 = workflow.add(steps.assertion(
    ir.AssertStatement(
        id='s1-assert-select-count-from-houses-0',
        text="ASSERT (SELECT count(*) FROM houses) > 0 MESSAGE 'houses is empty'",
        line=1,
        column=1,
        condition='(SELECT count(*) FROM houses) > 0',
        message='houses is empty',
        select='SELECT CASE WHEN (\n(SELECT count(*) FROM houses) > 0\n) THEN 1 WHEN NOT (\n(SELECT count(*) FROM houses) > 0\n) THEN 0 END AS holds',
        observed=[['(SELECT COUNT(*) FROM houses)', '(SELECT COUNT(*) FROM houses)']],
    )
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
