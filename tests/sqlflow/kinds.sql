-- SQLFlow corpus: every statement form SQLFlow's grammar accepts (go/parser/extended_syntax_parser.y):
-- TO TRAIN (its five clause orders, USING, no LABEL), TO PREDICT, TO EXPLAIN (its four forms),
-- TO EVALUATE, SHOW TRAIN, TO RUN, TO MAXIMIZE / TO MINIMIZE, and standard SQL between them.
-- Written for sqlml's tests; format in README.md. Models used are trained earlier in this file.

-- from: doc/language_guide.md (Training Syntax)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.hidden_units = [10, 10], model.n_classes = 3, train.epoch = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.my_dnn_model;

-- from: doc/language_guide.md (Prediction Syntax)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO PREDICT iris.predict.class
USING sqlflow_models.my_dnn_model;

-- from: doc/language_guide.md (Prediction Syntax: WITH predict.batch_size)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO PREDICT iris.predict_batched.class
WITH predict.batch_size = 1
USING sqlflow_models.my_dnn_model;

-- from: grammar train_clause "TO TRAIN IDENT WITH attrs label_clause optional_using INTO IDENT" (no COLUMN)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [16, 8]
LABEL class
INTO sqlflow_models.iris_no_column;

-- from: grammar train_clause "TO TRAIN IDENT label_clause optional_using INTO IDENT" (no WITH); doc/design/feature_derivation.md
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN DNNClassifier
LABEL class
INTO creditcard.derived_model;

-- from: grammar train_clause "TO TRAIN IDENT WITH attrs optional_using INTO IDENT" (no COLUMN, no LABEL); go/cmd/sqlflowserver/e2e_common_cases.go (OneClassSVM)
-- needs: iris.train (sepal_length, sepal_width, petal_length, petal_width)
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris.train
TO TRAIN sqlflow_models.OneClassSVM
WITH model.kernel = "rbf"
INTO sqlflow_models.iris_outliers;

-- from: grammar train_clause "TO TRAIN IDENT WITH attrs column_clause optional_using INTO IDENT" (COLUMN, no LABEL); doc/tutorial/apsara2019/activepower_clustering/README.md
-- needs: activepower.train (m1..m10)
SELECT * FROM activepower.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH model.n_clusters = 3, model.pretrain_epochs = 10, train.batch_size = 256
COLUMN m1, m2, m3, m4, m5, m6, m7, m8, m9, m10
INTO sqlflow_models.activepower_clusters;

-- from: doc/tutorial/apsara2019/activepower_clustering/README.md (TO PREDICT of a clustering model writes the cluster id)
-- needs: activepower.test; model sqlflow_models.activepower_clusters
SELECT * FROM activepower.test
TO PREDICT activepower.predict.class
USING sqlflow_models.activepower_clusters;

-- from: doc/design/clustermodel.md (WITH, COLUMN, USING a pretrained model, no LABEL)
-- needs: activepower.train (m1..m10); model sqlflow_models.activepower_clusters
SELECT * FROM activepower.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH model.n_clusters = 3, model.run_pretrain = false
COLUMN m1, m2, m3, m4, m5, m6, m7, m8, m9, m10
USING sqlflow_models.activepower_clusters
INTO sqlflow_models.activepower_clusters_v2;

-- from: grammar train_clause with optional_using (WITH, COLUMN, LABEL, USING, INTO)
-- needs: iris.train; model sqlflow_models.my_dnn_model
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH train.epoch = 2
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
USING sqlflow_models.my_dnn_model
INTO sqlflow_models.my_dnn_model_continued;

-- from: grammar train_clause "TO TRAIN IDENT label_clause optional_using INTO IDENT" (LABEL, USING)
-- needs: iris.train; model sqlflow_models.my_dnn_model
SELECT * FROM iris.train
TO TRAIN DNNClassifier
LABEL class
USING sqlflow_models.my_dnn_model
INTO sqlflow_models.my_dnn_model_continued_2;

-- from: grammar train_clause "TO TRAIN IDENT WITH attrs label_clause optional_using INTO IDENT" (WITH, LABEL, USING)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", train.num_boost_round = 30
LABEL medv
INTO sqlflow_models.my_xgb_regression_model;

-- from: grammar train_clause (WITH, LABEL, USING) continuing an XGBoost model
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH train.num_boost_round = 10
LABEL medv
USING sqlflow_models.my_xgb_regression_model
INTO sqlflow_models.my_xgb_regression_model_more;

-- from: doc/language_guide.md (Label Clause: double quotes around a label name)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
LABEL "class"
INTO sqlflow_models.iris_quoted_label;

-- from: grammar label_clause "LABEL STRING" (single quotes)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN LinearClassifier
WITH model.n_classes = 3
LABEL 'class'
INTO sqlflow_models.iris_single_quoted_label;

-- from: grammar explain_clause "TO EXPLAIN IDENT optional_using" (bare); go/parser/sqlflow_parser_test.go
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model;

-- from: grammar explain_clause "TO EXPLAIN IDENT USING IDENT"
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
USING TreeExplainer;

-- from: grammar explain_clause "TO EXPLAIN IDENT optional_using INTO IDENT" (INTO without USING); go/cmd/sqlflowserver/e2e_mysql_test.go
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
INTO boston.explain_result;

-- from: parser test TestExtendedSyntaxParseToExplainIntoNoWith
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
USING TreeExplainer
INTO boston.explain_tree_result;

-- from: grammar explain_clause "TO EXPLAIN IDENT WITH attrs optional_using" (WITH, no USING); doc/sqlflow.org_cn/titanic_survival_prediction.cn.md
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
WITH summary.plot_type = "bar";

-- from: doc/tutorial/housing-explain.md (WITH, USING)
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
WITH summary.plot_type = "dot", summary.alpha = 1, summary.sort = True
USING TreeExplainer;

-- from: parser test TestExtendedSyntaxParseToExplainInto (WITH, USING, INTO)
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
WITH summary.plot_type = "bar"
USING TreeExplainer
INTO boston.explain_bar_result;

-- from: grammar explain_clause "TO EXPLAIN IDENT WITH attrs optional_using INTO IDENT" (WITH, INTO, no USING)
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
WITH summary.sort = True
INTO boston.explain_sorted_result;

-- from: doc/sqlflow.org_cn/tutorials/fraud-dnn.cn.md (TO EXPLAIN of a DNN model, label not in WITH)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO EXPLAIN sqlflow_models.my_dnn_model
WITH summary.plot_type = "bar";

-- from: grammar evaluate_clause "TO EVALUATE IDENT label_clause INTO IDENT" (no WITH)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.my_dnn_model
LABEL class
INTO iris.evaluation_default;

-- from: doc/language_guide.md (Evaluation Syntax); go/cmd/sqlflowserver/e2e_mysql_test.go
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.my_dnn_model
WITH validation.metrics = "Accuracy,AUC"
LABEL class
INTO iris.evaluation_result;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO EVALUATE of an XGBoost regressor, sklearn metric names)
-- needs: boston.test; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.test
TO EVALUATE sqlflow_models.my_xgb_regression_model
WITH validation.metrics = "mean_absolute_error,mean_squared_error"
LABEL medv
INTO boston.evaluation_result;

-- from: parser test TestExtendedShowTrainStmt
-- needs: model sqlflow_models.my_dnn_model
SHOW TRAIN sqlflow_models.my_dnn_model;

-- from: go/parser/sqlflow_parser_test.go (SHOW TRAIN with two spaces before the name)
-- needs: model sqlflow_models.my_xgb_regression_model
SHOW TRAIN  sqlflow_models.my_xgb_regression_model;

-- from: parser test TestExtendedSyntaxParseToRun (image only)
-- needs: iris.train
SELECT * FROM iris.train
TO RUN a_data_scientist/ts_data_processor:1.0;

-- from: parser test TestExtendedSyntaxParseToRun (CMD with one parameter)
-- needs: iris.train
SELECT * FROM iris.train
TO RUN a_data_scientist/ts_data_processor:1.0
CMD "slide_window_to_row";

-- from: doc/language_guide.md (TO RUN Syntax)
-- needs: iris.train
SELECT * FROM iris.train
TO RUN sqlflow/runnable:v0.0.1
CMD "binning.py",
    "--dbname=iris",
    "--columns=sepal_length,sepal_width",
    "--bin_method=bucket,log_bucket",
    "--bin_num=10,5"
INTO train_binning_result;

-- from: doc/tutorial/fraud-analysis.md (TO RUN with three output tables)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO RUN sqlflow/runnable:v0.0.1
CMD "two_dim_binning.py",
    "--dbname=creditcard",
    "--columns=v1,v2",
    "--bin_method=bucket,bucket",
    "--bin_num=10,5"
INTO creditcard_stats_result, creditcard_two_dim_prob, creditcard_two_dim_binning_cumsum_prob;

-- from: doc/design/to_run.md (ORDER BY in the SELECT, CMD on its own line)
-- needs: fund.train
SELECT * FROM fund.train ORDER BY time
TO RUN a_data_scientist/ts_data_processor:1.0
CMD
  "slide_window_to_row",
  "--time_column=time",
  "--value_column=purchase",
  "--window_width=120"
INTO fund.purchase_windows;

-- from: doc/tutorial/optimization_guide.md (TO MAXIMIZE, CONSTRAINT, USING glpk)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100,
           SUM(carpentry * amount) <= 80,
           amount <= max_num
WITH variables = "amount(product)",
     var_type = "NonNegativeIntegers"
USING glpk
INTO woodcarving.result_table;

-- from: parser test TestExtendedSyntaxOptimize (TO MINIMIZE, GROUP BY constraint, no USING)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MINIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100 GROUP BY product,
           amount <= max_num
WITH variables = "amount(product)",
     var_type = "Integers"
INTO woodcarving.min_result_table;

-- from: grammar optimize_clause (optional_constraint_list empty)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MAXIMIZE SUM(price * amount)
WITH variables = "amount(product)",
     var_type = "Binary"
USING glpk
INTO woodcarving.no_constraint_result;

-- from: doc/language_guide.md (SELECT with WHERE and LIMIT before TO TRAIN)
-- needs: iris.train
SELECT *
FROM iris.train
WHERE class = 0 OR class = 1
LIMIT 1000
TO TRAIN DNNClassifier
WITH model.n_classes = 2, model.hidden_units = [10, 10]
LABEL class
INTO sqlflow_models.iris_binary;

-- from: go/parser/sqlflow_parser_test.go (SELECT ... UNION ... SELECT before TO EXPLAIN)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM (SELECT * FROM iris.test LIMIT 10) a UNION SELECT * FROM (SELECT * FROM iris.test) b
TO EXPLAIN sqlflow_models.my_dnn_model;

-- from: go/parser/sqlflow_parser_test.go (standard SQL, then an extended statement, then standard SQL)
-- needs: iris.train
SELECT * FROM iris.train LIMIT 5;

-- from: go/parser/external/test_cases.go (a subquery in WHERE) before TO PREDICT
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT sepal_length, sepal_width, petal_length, petal_width
FROM iris.test
WHERE petal_length = (SELECT MAX(petal_length) FROM iris.test)
TO PREDICT iris.predict_longest.class
USING sqlflow_models.my_dnn_model;

-- from: doc/tutorial/cora-gcn.md (JOIN and ORDER BY before TO TRAIN), adapted to the boston tables
-- needs: boston.train, boston.test
SELECT a.crim, a.rm, a.lstat, a.medv
FROM boston.train AS a
LEFT JOIN boston.test AS b ON (a.crim = b.crim)
ORDER BY a.crim
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror"
LABEL medv
INTO sqlflow_models.boston_joined;

-- from: doc/tutorial/fraud-dnn.md (WHERE in the SELECT of TO PREDICT, model name with a database)
-- needs: creditcard.creditcard; model creditcard.derived_model
SELECT * FROM creditcard.creditcard
WHERE class = 1
TO PREDICT creditcard.predict.class
USING creditcard.derived_model;

-- from: doc/walkthrough.md (TO PREDICT into a table without a database)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test TO PREDICT predicted_iris.class USING sqlflow_models.my_dnn_model;

-- from: doc/export_model.md (WITH and no COLUMN), the model named without a database
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10, 20]
LABEL class
INTO my_dnn_model;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO PREDICT of a model without a database)
-- needs: iris.test; model my_dnn_model
SELECT * FROM iris.test TO PREDICT iris.predict_plain.class USING my_dnn_model;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (SHOW TRAIN of a model without a database)
-- needs: model my_dnn_model
SHOW TRAIN my_dnn_model;

-- from: doc/tutorial/score_card.md (TO TRAIN with only LABEL)
-- needs: scorecard.train
SELECT * FROM scorecard.train
TO TRAIN sqlflow_models.ScoreCard
LABEL serious_dlqin2yrs
INTO sqlflow_models.my_scorecard_model;

-- from: doc/tutorial/apsara2019/titanic_dnn/README.md
-- needs: titanic.train
SELECT *
FROM titanic.train
TO TRAIN DNNClassifier
WITH
  model.n_classes = 2,
  model.hidden_units = [10, 40, 10],
  train.epoch = 200,
  train.batch_size = 64
COLUMN pclass_1, pclass_2, pclass_3, sex_female, sex_male, embarked_c, embarked_q, embarked_s,
       title_master, title_misc, title_miss, title_mr, title_mrs, nosibsp, noparch, nullcabin,
       cabinalpha, family, isalone, ismother, age, realfare
LABEL survived
INTO sqlflow_models.my_titanic_model;

-- from: doc/tutorial/apsara2019/titanic_dnn/README.md (TO PREDICT)
-- needs: titanic.test; model sqlflow_models.my_titanic_model
SELECT *
FROM titanic.test
TO PREDICT titanic.predict.survived
USING sqlflow_models.my_titanic_model;

-- from: doc/sqlflow.org_cn/titanic_survival_prediction.cn.md (bare TO EXPLAIN of a DNN model)
-- needs: titanic.test; model sqlflow_models.my_titanic_model
SELECT * FROM titanic.test
TO EXPLAIN sqlflow_models.my_titanic_model;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (TO EVALUATE with Keras names Accuracy,Recall)
-- needs: titanic.test; model sqlflow_models.my_titanic_model
SELECT * FROM titanic.test
TO EVALUATE sqlflow_models.my_titanic_model
WITH validation.metrics = "Accuracy,Recall"
LABEL survived
INTO titanic.evaluate_result;

-- from: doc/design/sqlflow_parser.md (TO PREDICT my_predict_table: no result column, named after the model's label)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO PREDICT my_predict_table
USING sqlflow_models.my_dnn_model;

-- from: doc/language_guide.md (Prediction Syntax: TO PREDICT result_table_reference WITH ... USING)
-- needs: iris.test; model sqlflow_models.my_dnn_model
SELECT * FROM iris.test
TO PREDICT result_table_reference
WITH predict.batch_size = 1
USING sqlflow_models.my_dnn_model;

-- from: go/parser/sqlflow_parser_test.go (to predict a using b: lower case, a table of one word)
-- needs: iris.test; model my_dnn_model
SELECT * FROM iris.test to predict a using my_dnn_model;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (caseShowTrain: SHOW TRAIN of an XGBoost model; its columns are Model and Train Statement)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN xgboost.gbtree
	WITH objective="reg:squarederror"
	LABEL class 
	INTO sqlflow_models.my_xgb_model_for_show_train;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (caseShowTrain)
-- needs: model sqlflow_models.my_xgb_model_for_show_train
SHOW TRAIN sqlflow_models.my_xgb_model_for_show_train;

-- from: parser test TestExtendedSyntaxOptimize (as written: the domain under the variable's name, product = "Integers", and USING glpk)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MAXIMIZE SUM((price - materials_cost - other_cost) * product)
CONSTRAINT SUM(finishing * product) <= 100,
           SUM(carpentry * product) <= 80,
		   product <= max_num
WITH variables="product",
	 product="Integers"
USING glpk
INTO woodcarving.parser_test_max;

-- from: parser test TestExtendedSyntaxOptimize (as written: TO MINIMIZE, GROUP BY product, the domain under the variable's name)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MINIMIZE SUM((price - materials_cost - other_cost) * product)
CONSTRAINT SUM(finishing * product) <= 100 GROUP BY product,
           SUM(carpentry * product) <= 80,
		   product <= max_num
WITH variables="product",
	 product="Integers"
INTO woodcarving.parser_test_min;

-- from: go/ir/ir_generator_test.go (TestGenerateOptimizeStmt, oneVarSQLWithResultValueName: the constraint product <= max_num does not involve the variable amount)
-- needs: woodcarving.products
SELECT * FROM woodcarving.products
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100,
           SUM(carpentry * amount) <= 80,
           product <= max_num
WITH variables="amount(product)",
     var_type="NonNegativeIntegers"
USING glpk
INTO woodcarving.result_value_name;
