-- How well the churn programs' models learned SeniorCitizen (sqlml's measurement, not
-- SQLFlow's text). SQLFlow reports no figure for these statements (they are end-to-end
-- tests that check only that each statement runs), so the bar is the majority-class rate
-- (always answering "not a senior"), computed here from the same rows: the models must
-- beat it clearly, which they can only by reading tenure (see data.py).

-- The last model of each subtest on churn.test, customers it never saw.
SELECT seniorcitizen, customerid, gender, tenure FROM churn.test TO EVALUATE churn.xgb_fc_test_model_3_new WITH validation.metrics="accuracy_score" LABEL seniorcitizen INTO churn.test_evaluation_3;
SELECT seniorcitizen, customerid, gender, tenure FROM churn.test TO EVALUATE churn.xgb_fc_test_model_4_new WITH validation.metrics="accuracy_score" LABEL seniorcitizen INTO churn.test_evaluation_4;

-- The majority-class rates of the training and the test rows.
SELECT MAX(n) * 1.0 / SUM(n) AS majority_rate FROM (SELECT COUNT(*) AS n FROM churn.train GROUP BY SeniorCitizen) c;
SELECT MAX(n) * 1.0 / SUM(n) AS majority_rate FROM (SELECT COUNT(*) AS n FROM churn.test GROUP BY SeniorCitizen) c;

-- expect: SELECT (SELECT accuracy_score FROM churn.xgb_fc_test_evaluate_table_3) - (SELECT MAX(n) * 1.0 / SUM(n) FROM (SELECT COUNT(*) AS n FROM churn.train GROUP BY SeniorCitizen) c) >= 0.05   -- no figure in SQLFlow's tests: the test's own TO EVALUATE (on churn.train) beats the majority-class rate
-- expect: SELECT (SELECT accuracy_score FROM churn.test_evaluation_3) - (SELECT MAX(n) * 1.0 / SUM(n) FROM (SELECT COUNT(*) AS n FROM churn.test GROUP BY SeniorCitizen) c) >= 0.05   -- no figure in SQLFlow's tests: CATEGORY_ID(gender, 2)'s model beats the majority-class rate on unseen customers
-- expect: SELECT (SELECT accuracy_score FROM churn.test_evaluation_4) - (SELECT MAX(n) * 1.0 / SUM(n) FROM (SELECT COUNT(*) AS n FROM churn.test GROUP BY SeniorCitizen) c) >= 0.05   -- no figure in SQLFlow's tests: INDICATOR(CATEGORY_ID(gender, 2))'s model beats the majority-class rate on unseen customers
-- expect-file: churn.xgb_fc_test_model_3_new_explain.png   -- the TO EXPLAIN's summary plot (summary.plot_type=bar)
