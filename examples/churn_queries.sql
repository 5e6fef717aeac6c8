-- Models inside queries: PREDICT and PREDICT_PROBA in standard SQL, a view that scores
-- customers whenever it is read (by sqlml or by any client of the database), a filter on a
-- predicted probability and a join with the predictions.
-- Run with: sqlml run examples/churn_queries.sql   (paths below resolve next to this file)

CREATE OR REPLACE TABLE churn AS
SELECT * FROM read_csv('churn.csv', types = {'churned': 'VARCHAR'});

-- The database scores the model as SQL, which reads numeric columns: the text columns as
-- numbers, derived once in a view that training and scoring both read.
CREATE OR REPLACE VIEW churn_numbers AS
SELECT customer_id, tenure, monthly_charges,
       CASE contract WHEN 'one year' THEN 12 WHEN 'two year' THEN 24 ELSE 1 END
         AS contract_months,
       CAST(internet_service = 'fiber optic' AS INTEGER) AS fiber_optic,
       CAST(payment_method = 'electronic check' AS INTEGER) AS electronic_check,
       churned
FROM churn;

-- Trained on four customers in five; every fifth is held out.
SELECT tenure, monthly_charges, contract_months, fiber_optic, electronic_check, churned
FROM churn_numbers
WHERE customer_id % 5 <> 0
TO TRAIN xgboost.gbtree
WITH eta = 0.1, max_depth = 3, train.num_boost_round = 60
LABEL churned
INTO churn_queries_model;

-- A view: each read scores the customers with the model as it was when the view was made.
CREATE OR REPLACE VIEW churn_risk AS
SELECT customer_id, tenure, contract_months,
       PREDICT(churn_queries_model) AS predicted,
       PREDICT_PROBA(churn_queries_model, 'yes') AS p_yes
FROM churn_numbers;

-- TO PREDICT writes the same classes into a table.
SELECT customer_id, tenure, monthly_charges, contract_months, fiber_optic, electronic_check
FROM churn_numbers
WHERE customer_id % 5 = 0
TO PREDICT churn_queries_pred.churned
USING churn_queries_model;

-- The held-out customers: how often the view is right, and how it agrees with the table.
SELECT count(*) AS customers,
       round(avg(CASE WHEN r.predicted = n.churned THEN 1.0 ELSE 0.0 END), 3) AS accuracy,
       sum(CASE WHEN r.predicted = p.churned THEN 1 ELSE 0 END) AS same_as_to_predict
FROM churn_risk AS r
JOIN churn_numbers AS n USING (customer_id)
JOIN churn_queries_pred AS p USING (customer_id);

-- A filter on the probability, in a plain query: the held-out customers most at risk.
SELECT customer_id, tenure, contract_months,
       round(PREDICT_PROBA(churn_queries_model, 'yes'), 3) AS p_yes
FROM churn_numbers
WHERE customer_id % 5 = 0 AND PREDICT_PROBA(churn_queries_model, 'yes') > 0.9
ORDER BY p_yes DESC, customer_id;
