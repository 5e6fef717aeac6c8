-- Customer churn: which customers of a telephone and internet company will leave?
-- A binary label ('yes' or 'no') learned from numbers and text columns.
-- Run with: sqlml run examples/churn.sql   (paths below resolve next to this file)

-- DuckDB would read the yes/no column as booleans: keep it text, like the other databases.
CREATE OR REPLACE TABLE churn AS
SELECT * FROM read_csv('churn.csv', types = {'churned': 'VARCHAR'});

-- Every fifth customer is held out for testing.
CREATE OR REPLACE TABLE churn_train AS SELECT * FROM churn WHERE customer_id % 5 <> 0;
CREATE OR REPLACE TABLE churn_test AS SELECT * FROM churn WHERE customer_id % 5 = 0;

-- Gradient-boosted trees. The text columns (contract, payment_method, internet_service)
-- become categories by themselves; customer_id is left out of the SELECT.
SELECT tenure, contract, payment_method, internet_service, monthly_charges, churned
FROM churn_train
TO TRAIN xgboost.gbtree
WITH eta = 0.1, max_depth = 3, train.num_boost_round = 60
LABEL churned
INTO churn_xgboost;

-- A neural network on the same columns.
SELECT tenure, contract, payment_method, internet_service, monthly_charges, churned
FROM churn_train
TO TRAIN DNNClassifier
WITH model.hidden_units = [16, 8], train.epoch = 10, train.batch_size = 32
LABEL churned
INTO churn_dnn;

-- Both models measured on the held-out customers, one row of metrics each.
SELECT * FROM churn_test TO EVALUATE churn_xgboost LABEL churned INTO churn_xgboost_metrics;
SELECT * FROM churn_test TO EVALUATE churn_dnn LABEL churned INTO churn_dnn_metrics;

-- Predictions, with the probability of each class.
SELECT * FROM churn_test
TO PREDICT churn_pred.churned
WITH predict.extra_outputs = 'probabilities'
USING churn_xgboost;

-- What drives churn: SHAP values of the trees, and a plot of them.
SELECT * FROM churn_test
TO EXPLAIN churn_xgboost
WITH explain.plot = 'churn_explain.png'
INTO churn_explanation;

SELECT 'xgboost' AS model, round(accuracy, 3) AS accuracy, round(auc, 3) AS auc
FROM churn_xgboost_metrics
UNION ALL
SELECT 'dnn', round(accuracy, 3), round(auc, 3) FROM churn_dnn_metrics;

SELECT feature, round(importance, 3) AS importance FROM churn_explanation
ORDER BY importance DESC;

-- The customers most likely to leave.
SELECT customer_id, contract, tenure, monthly_charges, churned, round(churned_yes, 3) AS p_yes
FROM churn_pred
ORDER BY churned_yes DESC
LIMIT 5;
