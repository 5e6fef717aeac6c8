-- House prices: a regression. Predict a sale price (in thousands) from the size, the
-- number of rooms, the age and the neighbourhood (a text column) of a house.
-- Run with: sqlml run examples/houses.sql   (paths below resolve next to this file)

-- Every fifth house is held out for testing.
CREATE OR REPLACE TABLE houses AS SELECT * FROM read_csv('houses.csv');
CREATE OR REPLACE TABLE houses_train AS SELECT * FROM houses WHERE house_id % 5 <> 0;
CREATE OR REPLACE TABLE houses_test AS SELECT * FROM houses WHERE house_id % 5 = 0;

-- Gradient-boosted regression trees: a numeric label gives reg:squarederror.
SELECT size_sqm, rooms, age_years, neighbourhood, price FROM houses_train
TO TRAIN xgboost.gbtree
WITH eta = 0.1, max_depth = 4, train.num_boost_round = 150
LABEL price
INTO houses_xgboost;

-- A neural network regressor; the price is standardised while training.
SELECT size_sqm, rooms, age_years, neighbourhood, price FROM houses_train
TO TRAIN DNNRegressor
WITH model.hidden_units = [32, 16], train.epoch = 20, train.batch_size = 32
LABEL price
INTO houses_dnn;

-- Mean absolute error, RMSE and R2 on the held-out houses.
SELECT * FROM houses_test TO EVALUATE houses_xgboost LABEL price INTO houses_xgboost_metrics;
SELECT * FROM houses_test TO EVALUATE houses_dnn LABEL price INTO houses_dnn_metrics;

SELECT * FROM houses_test TO PREDICT houses_pred.price USING houses_xgboost;

-- Which features move the price: SHAP values of the trees, and a plot of them.
SELECT * FROM houses_test
TO EXPLAIN houses_xgboost
WITH explain.plot = 'houses_explain.png'
INTO houses_explanation;

SELECT 'xgboost' AS model, round(mae, 1) AS mae, round(rmse, 1) AS rmse, round(r2, 3) AS r2
FROM houses_xgboost_metrics
UNION ALL
SELECT 'dnn', round(mae, 1), round(rmse, 1), round(r2, 3) FROM houses_dnn_metrics;

SELECT feature, round(importance, 3) AS importance FROM houses_explanation
ORDER BY importance DESC;

-- Predicted next to actual prices.
SELECT t.house_id, t.neighbourhood, t.size_sqm, t.price, round(p.price, 1) AS predicted
FROM houses_test t JOIN houses_pred p ON p.house_id = t.house_id
ORDER BY t.house_id
LIMIT 5;
