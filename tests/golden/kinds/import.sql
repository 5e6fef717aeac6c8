-- TO IMPORT: a model trained elsewhere, its inputs checked against COLUMN and the SELECT.
SELECT * FROM iris.train
TO IMPORT 'models/iris.onnx'
WITH format = onnx
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.iris_imported;

SELECT * FROM iris.test TO PREDICT iris.predict.class USING sqlflow_models.iris_imported;
