-- Iris flowers: train two classifiers and predict the species of held-out flowers.
-- Run with: sqlml run examples/iris.sql   (paths below resolve next to this file)

-- Every fifth flower is held out for testing.
CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');
CREATE OR REPLACE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;
CREATE OR REPLACE TABLE iris_test AS SELECT * FROM iris WHERE id % 5 = 0;

-- Gradient-boosted trees.
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", eta = 0.3, max_depth = 4, train.num_boost_round = 30
LABEL class
INTO iris_xgboost;

-- A neural network on the same four measures (the id is not one: a SELECT * would make it
-- a feature too).
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10, 20], train.epoch = 50, train.batch_size = 8
LABEL class
INTO iris_dnn;

SELECT * FROM iris_test TO PREDICT iris_xgboost_pred.class USING iris_xgboost;
SELECT * FROM iris_test TO PREDICT iris_dnn_pred.class USING iris_dnn;

-- How many held-out flowers of each species each model names right.
SELECT t.class, count(*) AS flowers,
       count(*) FILTER (x.class = t.class) AS xgboost_right,
       count(*) FILTER (d.class = t.class) AS dnn_right
FROM iris_test t
JOIN iris_xgboost_pred x ON x.id = t.id
JOIN iris_dnn_pred d ON d.id = t.id
GROUP BY t.class
ORDER BY t.class;
