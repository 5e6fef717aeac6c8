-- SQLFlow corpus: estimator names. TensorFlow canned estimators (go/attribute/model_parameters.go),
-- XGBoost model types (go/codegen/xgboost/codegen.go resolveModelParams), the sqlflow_models zoo
-- (sql-machine-learning/models, used in SQLFlow's docs and e2e tests), model-zoo image names
-- (doc/design/model_zoo.md) and explainers. Written for sqlml's tests; format in README.md.

-- from: doc/tutorial/iris-dnn.md (DNNClassifier)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [10, 10],
  train.epoch = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.est_dnn;

-- from: doc/design/numeric_column_clause.md (DNNRegressor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN DNNRegressor
WITH model.hidden_units = [64, 32]
LABEL medv
INTO sqlflow_models.est_dnn_regressor;

-- from: go/attribute/model_parameters.go (LinearClassifier)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN LinearClassifier
WITH model.n_classes = 2
LABEL survived
INTO sqlflow_models.est_linear_classifier;

-- from: go/attribute/model_parameters.go (LinearRegressor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN LinearRegressor
LABEL medv
INTO sqlflow_models.est_linear_regressor;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (DNNLinearCombinedClassifier)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNLinearCombinedClassifier
WITH model.n_classes = 3, model.dnn_hidden_units = [10, 20]
COLUMN sepal_length, sepal_width FOR linear_feature_columns
COLUMN petal_length, petal_width FOR dnn_feature_columns
LABEL class
INTO sqlflow_models.est_wide_deep;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (DNNLinearCombinedRegressor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN DNNLinearCombinedRegressor
WITH model.dnn_hidden_units = [10, 20]
COLUMN crim, zn, chas FOR linear_feature_columns
COLUMN rm, age, lstat FOR dnn_feature_columns
LABEL medv
INTO sqlflow_models.est_wide_deep_regressor;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (BoostedTreesClassifier)
-- needs: iris.train
SELECT * FROM iris.train WHERE class != 2
TO TRAIN BoostedTreesClassifier
WITH model.n_batches_per_layer = 1, model.center_bias = True
LABEL class
INTO sqlflow_models.est_boosted_trees;

-- from: go/attribute/model_parameters.go (BoostedTreesRegressor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN BoostedTreesRegressor
WITH model.n_batches_per_layer = 1
LABEL medv
INTO sqlflow_models.est_boosted_trees_regressor;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (TO EXPLAIN of a BoostedTrees model, default explainer)
-- needs: iris.test; model sqlflow_models.est_boosted_trees
SELECT * FROM iris.test WHERE class != 2
TO EXPLAIN sqlflow_models.est_boosted_trees;

-- from: doc/tutorial/housing-xgboost.md (xgboost.gbtree)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH
    objective = "reg:squarederror",
    train.num_boost_round = 30
COLUMN crim, zn, indus, chas, nox, rm, age, dis, rad, tax, ptratio, b, lstat
LABEL medv
INTO sqlflow_models.my_xgb_regression_model;

-- from: doc/tutorial/housing-xgboost.md (TO PREDICT)
-- needs: boston.test; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.test
TO PREDICT boston.predict.medv
USING sqlflow_models.my_xgb_regression_model;

-- from: go/codegen/xgboost/codegen.go (xgboost.gblinear)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gblinear
WITH objective = "reg:squarederror"
LABEL medv
INTO sqlflow_models.est_xgb_gblinear;

-- from: go/codegen/xgboost/codegen.go (xgboost.dart)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.dart
WITH objective = "multi:softprob", num_class = 3
LABEL class
INTO sqlflow_models.est_xgb_dart;

-- from: doc/model_parameter.md (xgboost.xgbregressor, lower case)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.xgbregressor
WITH
    objective = "reg:squarederror",
    train.num_boost_round = 30,
    validation.select = "SELECT * FROM boston.test LIMIT 8"
LABEL medv
INTO sqlflow_models.est_xgbregressor;

-- from: go/codegen/xgboost/codegen.go (XGBOOST.XGBCLASSIFIER)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN xgboost.XGBClassifier
LABEL survived
INTO sqlflow_models.est_xgbclassifier;

-- from: go/codegen/xgboost/codegen.go (XGBCLASSIFIER without the xgboost. prefix)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN XGBClassifier
WITH objective = "multi:softprob", num_class = 3
LABEL class
INTO sqlflow_models.est_xgbclassifier_plain;

-- from: go/codegen/xgboost/codegen.go (XGBREGRESSOR without the xgboost. prefix)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN XGBRegressor
LABEL medv
INTO sqlflow_models.est_xgbregressor_plain;

-- from: go/codegen/xgboost/codegen.go (XGBOOST.XGBRFCLASSIFIER: random forest defaults)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN xgboost.XGBRFClassifier
WITH objective = "binary:logistic"
LABEL survived
INTO sqlflow_models.est_xgbrfclassifier;

-- from: go/codegen/xgboost/codegen.go (XGBOOST.XGBRFREGRESSOR)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.XGBRFRegressor
LABEL medv
INTO sqlflow_models.est_xgbrfregressor;

-- from: go/codegen/xgboost/codegen.go (XGBRFREGRESSOR without the prefix)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN XGBRFRegressor
LABEL medv
INTO sqlflow_models.est_xgbrfregressor_plain;

-- from: go/codegen/xgboost/codegen.go (XGBOOST.XGBRANKER: rank:pairwise by default)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.XGBRanker
LABEL rad
INTO sqlflow_models.est_xgbranker;

-- from: go/parser/sqlflow_parser_test.go (XGBoost.gbtree: the estimator's case varies)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN XGBoost.gbtree WITH
    objective = "binary:logistic"
LABEL class
INTO sqlflow_fraud_detection_model;

-- from: go/codegen/xgboost/codegen.go (strings.ToUpper: XGBOOST.GBTREE in upper case)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN XGBOOST.GBTREE
WITH objective = "multi:softmax", num_class = 3
LABEL class
INTO sqlflow_models.est_xgb_upper;

-- from: doc/tutorial/iris-dnn.md (sqlflow_models.AutoClassifier)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN sqlflow_models.AutoClassifier WITH
  model.n_classes = 3,
  train.epoch = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.est_auto;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO EXPLAIN of an AutoClassifier model)
-- needs: iris.test; model sqlflow_models.est_auto
SELECT * FROM iris.test LIMIT 10 TO EXPLAIN sqlflow_models.est_auto;

-- from: doc/sqlflow.org_cn/models.md (sqlflow_models.DNNClassifier, the Keras one)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN sqlflow_models.DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10, 20], model.optimizer = "adam"
LABEL class
INTO sqlflow_models.est_keras_dnn;

-- from: sql-machine-learning/models sqlflow_models/__init__.py (sqlflow_models.DNNRegressor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN sqlflow_models.DNNRegressor
WITH model.hidden_units = [64, 32]
LABEL medv
INTO sqlflow_models.est_keras_dnn_regressor;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (sqlflow_models.dnnclassifier_functional_model)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN sqlflow_models.dnnclassifier_functional_model
WITH model.n_classes = 3, validation.metrics = "CategoricalAccuracy"
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.est_functional;

-- from: doc/tutorial/imdb-stackedbilstm.md (sqlflow_models.StackedBiLSTMClassifier, lower-case column)
-- needs: imdb.train
SELECT content, class
    FROM imdb.train limit 100
    TO TRAIN sqlflow_models.StackedBiLSTMClassifier
    WITH
    model.n_classes = 2,
    model.stack_units = [64,32],
    model.hidden_size = 64,
    train.epoch = 10,
    train.batch_size = 64
    column EMBEDDING(SEQ_CATEGORY_ID(content, 16000), 128, sum)
    LABEL class
    INTO sqlflow_models.my_custom_model;

-- from: doc/tutorial/imdb-stackedbilstm.md (TO PREDICT with the StackedBiLSTM model)
-- needs: imdb.test; model sqlflow_models.my_custom_model
SELECT *
    FROM imdb.test
    TO PREDICT imdb.predict.class
    USING sqlflow_models.my_custom_model;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (sqlflow_models.StackedRNNClassifier: model_type, bidirectional)
-- needs: text_cn.train
SELECT news_title, class_id FROM text_cn.train
TO TRAIN sqlflow_models.StackedRNNClassifier
WITH model.n_classes = 17, model.stack_units = [16], model.model_type = "lstm", model.bidirectional = True,
	 train.epoch = 1, train.batch_size = 32
COLUMN EMBEDDING(SEQ_CATEGORY_ID(news_title, 1600, COMMA), 128, mean)
LABEL class_id
INTO sqlflow_models.my_rnn_model;

-- from: sql-machine-learning/models sqlflow_models/rnnclassifier.py (StackedRNNClassifier with a GRU)
-- needs: imdb.train
SELECT content, class FROM imdb.train
TO TRAIN sqlflow_models.StackedRNNClassifier
WITH model.n_classes = 2, model.stack_units = [32, 32], model.model_type = "gru", model.hidden_size = 32
COLUMN EMBEDDING(SEQ_CATEGORY_ID(content, 16000), 64, mean)
LABEL class
INTO sqlflow_models.est_gru;

-- from: doc/tutorial/energe_lstmbasedtimeseries.md (sqlflow_models.RNNBasedTimeSeriesModel, a CSV label)
-- needs: energy.train, energy.val
SELECT col_1, col_2, col_3, col_4, col_5, col_6, col_7, col_8, col_9, col_10,
  concat(col_11, ',', col_12, ',', col_13, ',', energy) AS class FROM energy.train
TO TRAIN sqlflow_models.RNNBasedTimeSeriesModel
WITH
  model.n_in = 10,
  model.stack_units = [500, 500],
  model.n_out = 4,
  model.model_type = "lstm",
  train.batch_size = 10,
  train.epoch = 30,
  validation.metrics = "MeanAbsoluteError,MeanSquaredError"
LABEL class
INTO sqlflow_models.my_lstmts_model;

-- from: doc/tutorial/energe_lstmbasedtimeseries.md (TO PREDICT of the time-series model)
-- needs: energy.test; model sqlflow_models.my_lstmts_model
SELECT col_1, col_2, col_3, col_4, col_5, col_6, col_7, col_8, col_9, col_10,
concat(col_11, ',', col_12, ',', col_13, ',', energy) AS class
FROM energy.test
TO PREDICT energy.predict_lstmts_test.class USING sqlflow_models.my_lstmts_model;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (RNNBasedTimeSeriesModel on iris columns)
-- needs: iris.train
SELECT sepal_length, sepal_width, petal_length, concat(petal_width, ',', class) AS class FROM iris.train
TO TRAIN sqlflow_models.RNNBasedTimeSeriesModel WITH
	model.n_in = 3,
	model.stack_units = [10, 10],
	model.n_out = 2,
	model.model_type = "lstm",
	validation.metrics = "MeanAbsoluteError,MeanSquaredError"
LABEL class
INTO sqlflow_models.my_dnn_regts_model_2;

-- from: doc/sqlflow.org_cn/models.md (sqlflow_models.LSTMBasedTimeSeriesModel)
-- needs: energy.train
SELECT col_1, col_2, col_3, col_4, col_5, col_6, col_7, col_8, col_9, col_10,
  concat(col_11, ',', col_12, ',', col_13, ',', energy) AS class FROM energy.train
TO TRAIN sqlflow_models.LSTMBasedTimeSeriesModel
WITH model.n_in = 10, model.n_out = 4, model.stack_units = [50, 50]
LABEL class
INTO sqlflow_models.est_lstm_ts;

-- from: doc/tutorial/apsara2019/activepower_clustering/README.md (sqlflow_models.DeepEmbeddingClusterModel)
-- needs: activepower.train (m1..m48)
SELECT * FROM activepower.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH
  model.n_clusters = 3,
  model.pretrain_epochs = 10,
  model.train_max_iters = 800,
  model.train_lr = 0.01,
  model.pretrain_lr = 1,
  train.batch_size = 256
COLUMN m1,m2,m3,m4,m5,m6,m7,m8,m9,m10,m11,m12,m13,m14,m15,m16,m17,m18,m19,m20,m21,m22,m23,m24,
       m25,m26,m27,m28,m29,m30,m31,m32,m33,m34,m35,m36,m37,m38,m39,m40,m41,m42,m43,m44,m45,m46,m47,m48
INTO sqlflow_models.my_customized_model;

-- from: doc/tutorial/apsara2019/activepower_clustering/README.md (TO PREDICT writes the cluster id)
-- needs: activepower.train; model sqlflow_models.my_customized_model
SELECT *
FROM activepower.train
TO PREDICT activepower.predict.class
USING sqlflow_models.my_customized_model;

-- from: doc/sqlflow.org_cn/models.md (DeepEmbeddingClusterModel: every documented model.* attribute)
-- needs: activepower.train
SELECT * FROM activepower.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH model.n_clusters = 5, model.kmeans_init = 20, model.run_pretrain = True,
     model.pretrain_dims = [100, 100, 10], model.pretrain_activation_func = "relu",
     model.pretrain_batch_size = 256, model.train_batch_size = 256, model.pretrain_epochs = 5,
     model.pretrain_initializer = "glorot_uniform", model.pretrain_lr = 1, model.train_lr = 0.1,
     model.train_max_iters = 1000, model.update_interval = 100, model.tol = 0.001
COLUMN m1, m2, m3, m4, m5, m6, m7, m8
INTO sqlflow_models.est_dec_all_attrs;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (sqlflow_models.OneClassSVM, no LABEL)
-- needs: iris.train
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris.train
TO TRAIN sqlflow_models.OneClassSVM
WITH model.kernel = "rbf"
INTO sqlflow_models.est_one_class_svm;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO PREDICT of OneClassSVM writes the inlier/outlier label)
-- needs: iris.test; model sqlflow_models.est_one_class_svm
SELECT sepal_length, sepal_width, petal_length, petal_width
FROM iris.test
TO PREDICT iris.one_class_svm_predict.label
USING sqlflow_models.est_one_class_svm;

-- from: sql-machine-learning/models sqlflow_models/one_class_svm.py (OneClassSVM: nu, gamma, degree)
-- needs: creditcard.creditcard
SELECT v1, v2, v3, v4, amount FROM creditcard.creditcard
TO TRAIN sqlflow_models.OneClassSVM
WITH model.kernel = "poly", model.degree = 3, model.nu = 0.1, model.gamma = "scale"
INTO sqlflow_models.est_fraud_svm;

-- from: doc/tutorial/score_card.md (sqlflow_models.ScoreCard)
-- needs: scorecard.train
SELECT * FROM scorecard.train
TO TRAIN sqlflow_models.ScoreCard
LABEL serious_dlqin2yrs
INTO sqlflow_models.est_scorecard;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (sqlflow_models.ARIMAWithSTLDecomposition)
-- needs: fund.train
SELECT time, purchase FROM fund.train
TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition
WITH
  model.order = [7, 0, 2],
  model.period = [7, 30],
  model.date_format = "%Y-%m-%d",
  model.forecast_start = '2014-09-01',
  model.forecast_end = '2014-09-30'
LABEL purchase
INTO fund.purchase_model;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (ARIMAWithSTLDecomposition on the second series)
-- needs: fund.train
SELECT time, redeem FROM fund.train
TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition
WITH
  model.order = [7, 0, 2],
  model.period = [7, 30],
  model.date_format = "%Y-%m-%d",
  model.forecast_start = '2014-09-01',
  model.forecast_end = '2014-09-30'
LABEL redeem
INTO fund.redeem_model;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (ARIMAWithSTLDecomposition on both series at once, by series key, the order chosen)
-- needs: fund.train
-- note: model.series_key, model.horizon and a left-out model.order are sqlml's (issue 36); SQLFlow fits one series
SELECT 'purchase' AS series, time, purchase AS amount FROM fund.train
UNION ALL SELECT 'redeem' AS series, time, redeem AS amount FROM fund.train
TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition
WITH
  model.series_key = "series",
  model.period = [7, 30],
  model.horizon = 30
LABEL amount
INTO fund.amount_model;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (the forecast of both series, with 90% intervals)
-- needs: fund.train; model fund.amount_model
-- note: TO PREDICT of this model and predict.confidence_level are sqlml's (issue 36); SQLFlow prints its forecast while training
SELECT 'purchase' AS series UNION ALL SELECT 'redeem' AS series
TO PREDICT fund.amount_forecast.amount
WITH predict.confidence_level = 0.9
USING fund.amount_model;

-- from: doc/tutorial/cora-gcn.md (sqlflow_models.GCN on the nodes LEFT JOINed with their edges)
-- needs: cora.node, cora.edge
SELECT cora.node.id, features, label as class, cora.edge.from_node_id, cora.edge.to_node_id FROM cora.node
LEFT JOIN cora.edge ON (cora.node.id = cora.edge.from_node_id OR cora.node.id = cora.edge.to_node_id)
ORDER BY cora.node.id
TO TRAIN sqlflow_models.GCN
WITH model.nhid = 16, model.nclass = 7,
     model.epochs = 200, model.train_ratio = 0.15,
     model.eval_ratio = 0.2, validation.metrics = "CategoricalAccuracy"
COLUMN DENSE(features)
LABEL class
INTO sqlflow_models.gcn_model;

-- from: doc/design/model_zoo.md (image:tag/Estimator in TO TRAIN; the image sqlflow/sqlflow:latest as issue 15 writes it)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN sqlflow/sqlflow:latest/DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10, 10]
LABEL class
INTO sqlflow_models.est_zoo_image;

-- from: doc/design/get_model_metadata_in_prediction_codegen.md (my_docker_registry/my_docker_image:latest/...), adapted: a registry host with a port
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN registry:5000/my_docker_image:latest/DNNClassifier
WITH model.n_classes = 3
LABEL class
INTO sqlflow_models.est_zoo_registry;

-- from: doc/design/katib_on_sqlflow.md (a zoo image whose estimator is xgboost.gbtree)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN a_data_scientist/xgboost:v2/xgboost.gbtree
WITH objective = "reg:squarederror"
LABEL medv
INTO sqlflow_models.est_zoo_xgb;

-- from: doc/design/model_zoo.md (TO PREDICT of a model trained from a zoo image)
-- needs: iris.test; model sqlflow_models.est_zoo_image
SELECT * FROM iris.test
TO PREDICT iris.predict_zoo.class
USING sqlflow_models.est_zoo_image;

-- from: doc/design/model_zoo.md (USING a published model: host/owner/model)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN sqlflow/sqlflow:latest/DNNClassifier
WITH train.epoch = 2
LABEL class
USING models.sqlflow.org/an_analyst/my_first_model
INTO sqlflow_models.est_zoo_continued;

-- from: issue 15 (USING registry:5000/model:v1 as a base model name)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH train.epoch = 2
LABEL class
USING registry:5000/model:v1
INTO sqlflow_models.est_registry_base;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (USING XGBoostExplainer)
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
USING XGBoostExplainer;

-- from: doc/tutorial/housing-explain.md (USING TreeExplainer)
-- needs: boston.train; model sqlflow_models.my_xgb_regression_model
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.my_xgb_regression_model
USING TreeExplainer;

-- from: doc/design/explainer.md (a DNN model explained with the default, SHAP-style, explainer)
-- needs: iris.test; model sqlflow_models.est_dnn
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris.test
TO EXPLAIN sqlflow_models.est_dnn;

-- from: doc/sqlflow.org_cn/tutorials/fraud-dnn.cn.md (TO EXPLAIN a DNN model on rows of one class)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN DNNClassifier
WITH model.n_classes = 2, model.hidden_units = [128, 32], train.epoch = 100
COLUMN time, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v16, v17, v18, v19, v20,
       v21, v22, v23, v24, v25, v26, v27, v28, amount
LABEL class
INTO creditcard.creditcard_deep_model;

-- from: doc/sqlflow.org_cn/tutorials/fraud-dnn.cn.md (TO EXPLAIN of the fraud DNN, label constant in the rows)
-- needs: creditcard.creditcard; model creditcard.creditcard_deep_model
SELECT * FROM creditcard.creditcard WHERE class = 1 LIMIT 10
TO EXPLAIN creditcard.creditcard_deep_model
WITH summary.plot_type = "bar";

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (CaseOneClassSVMModelWithScore: predict.extra_outputs names the score column, the decision function beside the label)
-- needs: iris.test; model sqlflow_models.est_one_class_svm
SELECT sepal_length, sepal_width, petal_length, petal_width
FROM iris.test
TO PREDICT iris.one_class_svm_score.label
WITH predict.extra_outputs="score"
USING sqlflow_models.est_one_class_svm;
