"""Workflow explain, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('explain')

s1_explain_price_xgb = workflow.add(steps.explain(
    ir.ExplainStatement(
        id='s1-explain-price-xgb',
        text='SELECT area, rooms FROM houses TO EXPLAIN price_xgb INTO price_explanation',
        line=1,
        column=1,
        select='SELECT area, rooms FROM houses',
        model='price_xgb',
        explainer=None,
        table=['price_explanation'],
        attributes={'explain.seed': 0, 'output.replace': False},
    )
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
