-- SQLFlow has no churn tutorial page. Its churn programs are the end-to-end test cases on
-- churn.train in go/cmd/sqlflowserver/e2e_common_cases.go: caseXGBoostFeatureColumn runs
-- caseXGBoostFeatureColumnImpl on churn.train twice, as subtests
-- CaseXGBoostCategoryFeatureColumn and CaseXGBoostCategoryFeatureColumnWithIndicator.
-- Below are the statements those subtests run on MySQL, in order, with the Go templates
-- filled in as the test fills them: table churn.train, label seniorcitizen, columns
-- "seniorcitizen, customerid, gender, tenure", num_class 2, train.num_workers 1 (not PAI),
-- and the unique ids 3 and 4 that getUniqueID() hands the third and fourth subtest of
-- caseXGBoostFeatureColumn (the first two train on iris). Left out: the test's own checks,
-- "SELECT * FROM <model> LIMIT 1;" (SQLFlow stores a model as a table of that name; sqlml
-- keeps models in its model store) and the training with "USING <model>_none", which the
-- test expects to fail. The data: data.py (synthetic, see its docstring).

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: dropModelTableFunc(modelName)
DROP TABLE IF EXISTS churn.xgb_fc_test_model_3;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: trainSQL
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), CATEGORY_ID(gender, 2)
	LABEL seniorcitizen
	INTO churn.xgb_fc_test_model_3;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: incrementalTrainSQLWithOverwriting
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), CATEGORY_ID(gender, 2)
	LABEL seniorcitizen USING churn.xgb_fc_test_model_3 
	INTO churn.xgb_fc_test_model_3;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: dropModelTableFunc(newModelName)
DROP TABLE IF EXISTS churn.xgb_fc_test_model_3_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: incrementalTrainSQLWithoutOverwriting
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), CATEGORY_ID(gender, 2)
	LABEL seniorcitizen USING churn.xgb_fc_test_model_3 
	INTO churn.xgb_fc_test_model_3_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: predictSQL
SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO PREDICT churn.xgb_fc_test_predict_table_3.seniorcitizen_new USING churn.xgb_fc_test_model_3_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: evaluateSQL
SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO EVALUATE churn.xgb_fc_test_model_3_new WITH validation.metrics="accuracy_score" LABEL seniorcitizen INTO churn.xgb_fc_test_evaluate_table_3;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: explainSQL
SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO EXPLAIN churn.xgb_fc_test_model_3_new WITH summary.plot_type=bar ;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumn: showTrainSQL
SHOW TRAIN churn.xgb_fc_test_model_3_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: dropModelTableFunc(modelName)
DROP TABLE IF EXISTS churn.xgb_fc_test_model_4;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: trainSQL
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), INDICATOR(CATEGORY_ID(gender, 2))
	LABEL seniorcitizen
	INTO churn.xgb_fc_test_model_4;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: incrementalTrainSQLWithOverwriting
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), INDICATOR(CATEGORY_ID(gender, 2))
	LABEL seniorcitizen USING churn.xgb_fc_test_model_4 
	INTO churn.xgb_fc_test_model_4;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: dropModelTableFunc(newModelName)
DROP TABLE IF EXISTS churn.xgb_fc_test_model_4_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: incrementalTrainSQLWithoutOverwriting
	SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO TRAIN xgboost.gbtree
	WITH
		objective="multi:softprob",
		train.num_boost_round = 1,
		train.num_workers = 1,
		eta = 0.4,
		num_class = 2,
		validation.select="select seniorcitizen, customerid, gender, tenure from churn.train"
	COLUMN CATEGORY_HASH(customerid, 10), INDICATOR(CATEGORY_ID(gender, 2))
	LABEL seniorcitizen USING churn.xgb_fc_test_model_4 
	INTO churn.xgb_fc_test_model_4_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: predictSQL
SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO PREDICT churn.xgb_fc_test_predict_table_4.seniorcitizen_new USING churn.xgb_fc_test_model_4_new;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: evaluateSQL
SELECT seniorcitizen, customerid, gender, tenure FROM churn.train TO EVALUATE churn.xgb_fc_test_model_4_new WITH validation.metrics="accuracy_score" LABEL seniorcitizen INTO churn.xgb_fc_test_evaluate_table_4;

-- go/cmd/sqlflowserver/e2e_common_cases.go, CaseXGBoostCategoryFeatureColumnWithIndicator: no explainSQL (skipExplain: "INDICATOR of XGBoost model does not support TO EXPLAIN yet"); showTrainSQL
SHOW TRAIN churn.xgb_fc_test_model_4_new;
