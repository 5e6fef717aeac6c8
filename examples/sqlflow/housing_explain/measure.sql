-- The ranking the tutorial's plots show, written to a table.
SELECT * FROM boston.train TO EXPLAIN sqlflow_models.my_xgb_regression_model USING TreeExplainer INTO boston.explanation;

-- The tutorial's model scored on boston.test (100 tracts it was not trained on).
SELECT * FROM boston.test TO EVALUATE sqlflow_models.my_xgb_regression_model WITH validation.metrics = "r2_score" LABEL medv INTO boston.evaluation;

-- expect-file: sqlflow_models.my_xgb_regression_model_explain.png   -- the summary plot of the tutorial's TO EXPLAIN (no INTO: <model>_explain.png next to the program)
-- expect: SELECT count(*) FROM (SELECT feature FROM boston.explanation ORDER BY importance DESC LIMIT 2) top_two WHERE feature IN ('lstat', 'rm') >= 2   -- doc/tutorial/housing-explain.md's plots rank lstat then rm first
-- expect: SELECT r2_score FROM boston.evaluation >= 0.75   -- doc/tutorial/housing-explain.md gives no figure: the model explains three quarters of the variance of the test tracts' values
