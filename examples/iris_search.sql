-- Iris flowers: search the hyperparameters of a classifier, keep the best, predict with it.
-- Run with: sqlml run examples/iris_search.sql --jobs 2   (paths resolve next to this file)

-- Every fifth flower is held out for testing.
CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');
CREATE OR REPLACE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;
CREATE OR REPLACE TABLE iris_test AS SELECT * FROM iris WHERE id % 5 = 0;

-- Eight random trials (seeded: the same ones every run), ranked by their validation log loss
-- on 20% of the training rows (iris is easy: most trials reach the same accuracy); the best
-- is saved as iris_best, every trial in iris_best_trials.
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob",
     max_depth = CHOICE(2, 4, 6),
     eta = LOG_UNIFORM(0.05, 0.5),
     subsample = UNIFORM(0.6, 1.0),
     train.num_boost_round = INT_RANGE(5, 30),
     search.trials = 8, search.seed = 1, search.metric = log_loss
LABEL class
INTO iris_best;

SELECT trial, max_depth, eta, subsample, train_num_boost_round, validation_accuracy,
       validation_log_loss, status
FROM iris_best_trials ORDER BY validation_log_loss;

SELECT * FROM iris_test TO PREDICT iris_best_pred.class USING iris_best;

SELECT AVG(CASE WHEN p.class = t.class THEN 1.0 ELSE 0.0 END) AS accuracy
FROM iris_test t JOIN iris_best_pred p ON p.id = t.id;
