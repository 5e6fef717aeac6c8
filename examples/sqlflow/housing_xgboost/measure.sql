-- The tutorial's model scored on boston.test (100 tracts it was not trained on).
SELECT * FROM boston.test TO EVALUATE sqlflow_models.my_xgb_regression_model WITH validation.metrics = "r2_score,mean_absolute_error" LABEL medv INTO boston.evaluation;

-- The baseline: predicting every tract's value as the training tracts' mean.
DROP TABLE IF EXISTS boston.baseline;
CREATE TABLE boston.baseline AS
SELECT avg(abs(t.medv - m.mean_medv)) AS mean_absolute_error
FROM boston.test t, (SELECT avg(medv) AS mean_medv FROM boston.train) m;

-- expect: SELECT r2_score FROM boston.evaluation >= 0.75   -- doc/tutorial/housing-xgboost.md gives no figure: the model explains three quarters of the variance of the test tracts' values
-- expect: SELECT e.mean_absolute_error / b.mean_absolute_error FROM boston.evaluation e, boston.baseline b <= 0.5   -- doc/tutorial/housing-xgboost.md gives no figure: the model's mean absolute error is at most half the mean predictor's
