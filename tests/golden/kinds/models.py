"""Workflow models, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('models')

s1_show_train = workflow.add(steps.model_admin(
    ir.ShowTrainStatement(
        id='s1-show-train',
        text='SHOW TRAIN price_xgb',
        line=2,
        column=1,
        model='price_xgb',
    )
))
s2_show_models = workflow.add(steps.model_admin(
    ir.ShowModelsStatement(
        id='s2-show-models',
        text='SHOW MODELS',
        line=3,
        column=1,
    )
))
s3_describe_model = workflow.add(steps.model_admin(
    ir.DescribeModelStatement(
        id='s3-describe-model',
        text='DESCRIBE MODEL price_xgb',
        line=4,
        column=1,
        model='price_xgb',
    )
))
s4_drop_model = workflow.add(steps.model_admin(
    ir.DropModelStatement(
        id='s4-drop-model',
        text='DROP MODEL IF EXISTS price_xgb',
        line=5,
        column=1,
        model='price_xgb',
        if_exists=True,
    ),
    after=[s1_show_train, s2_show_models, s3_describe_model],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
