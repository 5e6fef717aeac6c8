"""Workflow models, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('models')

s01_show_train = workflow.add(steps.model_admin(
    ir.ShowTrainStatement(
        id='s01-show-train',
        text='SHOW TRAIN price_xgb',
        line=2,
        column=1,
        model='price_xgb',
    )
))
s02_show_train = workflow.add(steps.model_admin(
    ir.ShowTrainStatement(
        id='s02-show-train',
        text='SHOW TRAIN price_xgb VERSION 1',
        line=3,
        column=1,
        model='price_xgb',
        version=1,
    )
))
s03_show_models = workflow.add(steps.model_admin(
    ir.ShowModelsStatement(
        id='s03-show-models',
        text='SHOW MODELS',
        line=4,
        column=1,
    )
))
s04_show_model_versions = workflow.add(steps.model_admin(
    ir.ShowModelVersionsStatement(
        id='s04-show-model-versions',
        text='SHOW MODEL VERSIONS',
        line=5,
        column=1,
        model=None,
    )
))
s05_show_model_versions = workflow.add(steps.model_admin(
    ir.ShowModelVersionsStatement(
        id='s05-show-model-versions',
        text='SHOW MODEL VERSIONS price_xgb',
        line=6,
        column=1,
        model='price_xgb',
    )
))
s06_describe_model = workflow.add(steps.model_admin(
    ir.DescribeModelStatement(
        id='s06-describe-model',
        text='DESCRIBE MODEL price_xgb',
        line=7,
        column=1,
        model='price_xgb',
    )
))
s07_describe_model = workflow.add(steps.model_admin(
    ir.DescribeModelStatement(
        id='s07-describe-model',
        text='DESCRIBE MODEL price_xgb VERSION champion',
        line=8,
        column=1,
        model='price_xgb',
        version='champion',
    )
))
s08_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s08-alter-model',
        text='ALTER MODEL price_xgb SET ALIAS challenger TO VERSION 2',
        line=9,
        column=1,
        model='price_xgb',
        action='set_alias',
        alias='challenger',
        version=2,
        keep=None,
    ),
    after=[s01_show_train, s02_show_train, s03_show_models, s04_show_model_versions, s05_show_model_versions, s06_describe_model, s07_describe_model],
))
s09_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s09-alter-model',
        text='ALTER MODEL price_xgb PROMOTE VERSION challenger',
        line=10,
        column=1,
        model='price_xgb',
        action='promote',
        alias=None,
        version='challenger',
        keep=None,
    ),
    after=[s08_alter_model],
))
s10_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s10-alter-model',
        text='ALTER MODEL price_xgb ROLLBACK ALIAS champion',
        line=11,
        column=1,
        model='price_xgb',
        action='rollback_alias',
        alias='champion',
        version=None,
        keep=None,
    ),
    after=[s09_alter_model],
))
s11_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s11-alter-model',
        text='ALTER MODEL price_xgb DROP ALIAS challenger',
        line=12,
        column=1,
        model='price_xgb',
        action='drop_alias',
        alias='challenger',
        version=None,
        keep=None,
    ),
    after=[s10_alter_model],
))
s12_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s12-alter-model',
        text='ALTER MODEL price_xgb KEEP 5 VERSIONS',
        line=13,
        column=1,
        model='price_xgb',
        action='keep',
        alias=None,
        version=None,
        keep=5,
    ),
    after=[s11_alter_model],
))
s13_alter_model = workflow.add(steps.model_admin(
    ir.AlterModelStatement(
        id='s13-alter-model',
        text='ALTER MODEL price_xgb KEEP ALL VERSIONS',
        line=14,
        column=1,
        model='price_xgb',
        action='keep',
        alias=None,
        version=None,
        keep=None,
    ),
    after=[s12_alter_model],
))
s14_drop_model = workflow.add(steps.model_admin(
    ir.DropModelStatement(
        id='s14-drop-model',
        text='DROP MODEL IF EXISTS price_xgb',
        line=15,
        column=1,
        model='price_xgb',
        if_exists=True,
    ),
    after=[s13_alter_model],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
