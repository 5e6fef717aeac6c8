-- The tutorial's model scored on titanic.test (418 passengers it was not trained on).
SELECT * FROM titanic.test TO EVALUATE sqlflow_models.my_dnn_model WITH validation.metrics = "accuracy_score" LABEL survived INTO titanic.evaluation;

-- The baselines: everyone dies (the majority class), and "women survive, men die".
DROP TABLE IF EXISTS titanic.baseline;
CREATE TABLE titanic.baseline AS
SELECT 1 - avg(survived) AS majority_accuracy, avg(CASE WHEN sex_female = survived THEN 1 ELSE 0 END) AS gender_accuracy
FROM titanic.test;

-- expect: SELECT e.accuracy_score - b.majority_accuracy FROM titanic.evaluation e, titanic.baseline b >= 0.1   -- doc/tutorial/apsara2019/titanic_dnn/README.md gives no figure: ten points above predicting that everyone dies
-- expect: SELECT e.accuracy_score - b.gender_accuracy FROM titanic.evaluation e, titanic.baseline b >= 0   -- doc/tutorial/apsara2019/titanic_dnn/README.md gives no figure: at least as good as "women survive, men die"
