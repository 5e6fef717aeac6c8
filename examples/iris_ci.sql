-- Iris in CI: train, evaluate and predict, then ASSERT that the results are good enough.
-- Run with: sqlml run examples/iris_ci.sql --junit report.xml   (exit status 1 if an ASSERT fails)

CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');
CREATE OR REPLACE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;
CREATE OR REPLACE TABLE iris_test AS SELECT * FROM iris WHERE id % 5 = 0;

SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", max_depth = 4, train.num_boost_round = 30
LABEL class
INTO iris_ci_model;

SELECT * FROM iris_test TO EVALUATE iris_ci_model LABEL class INTO iris_ci_eval;
SELECT * FROM iris_test TO PREDICT iris_ci_pred.class USING iris_ci_model;

ASSERT (SELECT accuracy FROM iris_ci_eval) >= 0.85 MESSAGE 'model too weak';
ASSERT (SELECT count(*) FROM iris_ci_pred) = (SELECT count(*) FROM iris_test)
  MESSAGE 'prediction lost rows';
ASSERT NOT EXISTS (SELECT 1 FROM iris_ci_pred WHERE class IS NULL);
