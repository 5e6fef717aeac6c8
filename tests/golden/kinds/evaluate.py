"""Workflow evaluate, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('evaluate')

s1_evaluate_price_xgb = workflow.add(steps.evaluate(
    ir.EvaluateStatement(
        id='s1-evaluate-price-xgb',
        text="SELECT * FROM houses TO EVALUATE price_xgb WITH validation.metrics = 'rmse,mae'\n  LABEL price INTO price_metrics",
        line=1,
        column=1,
        select='SELECT * FROM houses',
        model='price_xgb',
        label='price',
        table=['price_metrics'],
        attributes={'output.replace': False, 'validation.metrics': 'rmse,mae'},
    )
))
s2_evaluate_price_xgb = workflow.add(steps.evaluate(
    ir.EvaluateStatement(
        id='s2-evaluate-price-xgb',
        text='SELECT * FROM houses TO EVALUATE price_xgb VERSION challenger LABEL price INTO challenger_metrics',
        line=3,
        column=1,
        select='SELECT * FROM houses',
        model='price_xgb',
        label='price',
        table=['challenger_metrics'],
        attributes={'output.replace': False},
        version='challenger',
    )
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
