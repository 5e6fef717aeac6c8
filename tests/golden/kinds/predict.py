"""Workflow predict, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('predict')

s1_predict_price_predictions_price = workflow.add(steps.predict(
    ir.PredictStatement(
        id='s1-predict-price-predictions-price',
        text='SELECT * FROM houses TO PREDICT price_predictions.price USING price_xgb',
        line=1,
        column=1,
        select='SELECT * FROM houses',
        table=['price_predictions'],
        result_column='price',
        model='price_xgb',
        attributes={'predict.batch_size': 65536, 'output.replace': False},
    )
))
s2_predict_pinned_price = workflow.add(steps.predict(
    ir.PredictStatement(
        id='s2-predict-pinned-price',
        text='SELECT * FROM houses TO PREDICT pinned.price USING price_xgb VERSION 2',
        line=2,
        column=1,
        select='SELECT * FROM houses',
        table=['pinned'],
        result_column='price',
        model='price_xgb',
        attributes={'predict.batch_size': 65536, 'output.replace': False},
        version=2,
    )
))
s3_predict_served_price = workflow.add(steps.predict(
    ir.PredictStatement(
        id='s3-predict-served-price',
        text='SELECT * FROM houses TO PREDICT served.price USING price_xgb VERSION champion',
        line=3,
        column=1,
        select='SELECT * FROM houses',
        table=['served'],
        result_column='price',
        model='price_xgb',
        attributes={'predict.batch_size': 65536, 'output.replace': False},
        version='champion',
    )
))
s4_predict_price_predictions = workflow.add(steps.predict(
    ir.PredictStatement(
        id='s4-predict-price-predictions',
        text='SELECT * FROM houses TO PREDICT price_predictions USING price_xgb',
        line=4,
        column=1,
        select='SELECT * FROM houses',
        table=['price_predictions'],
        result_column=None,
        model='price_xgb',
        attributes={'predict.batch_size': 65536, 'output.replace': False},
    ),
    after=[s1_predict_price_predictions_price],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
