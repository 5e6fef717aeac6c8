"""Workflow import, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('import')

s1_import_sqlflow_models_iris_imported = workflow.add(steps.statement(
    ir.ImportModelStatement(
        id='s1-import-sqlflow-models-iris-imported',
        text="SELECT * FROM iris.train\nTO IMPORT 'models/iris.onnx'\nWITH format = onnx\nCOLUMN sepal_length, sepal_width, petal_length, petal_width\nLABEL class\nINTO sqlflow_models.iris_imported",
        line=2,
        column=1,
        select='SELECT * FROM iris.train',
        file='models/iris.onnx',
        format='onnx',
        columns=['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
        label='class',
        model='sqlflow_models.iris_imported',
        attributes={'format': 'onnx'},
        file_at=[3, 11],
        columns_at=[5, 8],
    )
))
s2_predict_iris_predict_class = workflow.add(steps.predict(
    ir.PredictStatement(
        id='s2-predict-iris-predict-class',
        text='SELECT * FROM iris.test TO PREDICT iris.predict.class USING sqlflow_models.iris_imported',
        line=9,
        column=1,
        select='SELECT * FROM iris.test',
        table=['iris', 'predict'],
        result_column='class',
        model='sqlflow_models.iris_imported',
        attributes={'predict.batch_size': 65536, 'output.replace': False},
    ),
    after=[s1_import_sqlflow_models_iris_imported],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
