-- SQLFlow corpus: attributes, by group. TensorFlow canned estimators (model.*, optimizer.*,
-- train.*, validation.*), XGBoost (unprefixed booster parameters, train.*), TO PREDICT
-- (predict.*), TO EXPLAIN (summary.*, label_col), TO EVALUATE (validation.metrics).
-- Attribute names and defaults: ATTRIBUTES.md. Written for sqlml's tests; format in README.md.

-- from: doc/tutorial/iris-dnn.md (optimizer.learning_rate without model.optimizer)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [100, 100],
  optimizer.learning_rate = 0.1,
  train.epoch = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.attr_dnn;

-- from: doc/sqlflow.org_cn/params.md (model.optimizer with optimizer.* arguments)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [10, 10],
  model.optimizer = Adagrad,
  optimizer.learning_rate = 0.001,
  optimizer.initial_accumulator_value = 0.1
LABEL class
INTO sqlflow_models.attr_adagrad;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: Adam)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = Adam,
  optimizer.learning_rate = 0.01,
  optimizer.beta_1 = 0.9,
  optimizer.beta_2 = 0.999,
  optimizer.epsilon = 1e-07,
  optimizer.amsgrad = False
LABEL class
INTO sqlflow_models.attr_adam;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: SGD)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = SGD,
  optimizer.learning_rate = 0.05,
  optimizer.momentum = 0.9,
  optimizer.nesterov = True
LABEL class
INTO sqlflow_models.attr_sgd;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: RMSprop)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = RMSprop,
  optimizer.learning_rate = 0.001,
  optimizer.rho = 0.9,
  optimizer.momentum = 0.0,
  optimizer.centered = False
LABEL class
INTO sqlflow_models.attr_rmsprop;

-- from: go/codegen/tensorflow/codegen.go (tf1OptimizerClsNames: RMSProp spelling)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = "RMSProp"
LABEL class
INTO sqlflow_models.attr_rmsprop_tf1;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: Adadelta)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = Adadelta,
  optimizer.learning_rate = 1.0,
  optimizer.rho = 0.95
LABEL class
INTO sqlflow_models.attr_adadelta;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: Adamax)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = Adamax,
  optimizer.learning_rate = 0.002
LABEL class
INTO sqlflow_models.attr_adamax;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: Nadam)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.optimizer = Nadam,
  optimizer.learning_rate = 0.002,
  optimizer.beta_1 = 0.9
LABEL class
INTO sqlflow_models.attr_nadam;

-- from: go/attribute/model_parameters.go (OptimizerParamsDocs: Ftrl; LinearClassifier's default optimizer)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN LinearClassifier WITH
  model.n_classes = 3,
  model.optimizer = Ftrl,
  optimizer.learning_rate = 0.1,
  optimizer.l1_regularization_strength = 0.001,
  optimizer.l2_regularization_strength = 0.001
LABEL class
INTO sqlflow_models.attr_ftrl;

-- from: doc/sqlflow.org_cn/models.md (DNNClassifier: model.batch_norm, model.dropout)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN DNNClassifier WITH
    train.batch_size = 2048,
    model.batch_norm = True,
    model.dropout = 0.5,
    model.hidden_units = [200, 100, 50]
LABEL class
INTO sqlflow_models.attr_fraud_batch_norm;

-- from: go/attribute/model_parameters.go (DNNClassifier: activation_fn)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [16, 16],
  model.activation_fn = "relu"
LABEL class
INTO sqlflow_models.attr_activation;

-- from: go/attribute/model_parameters.go (DNNRegressor: label_dimension)
-- needs: boston.train
SELECT * FROM boston.train TO TRAIN DNNRegressor WITH
  model.hidden_units = [32, 16],
  model.label_dimension = 1
LABEL medv
INTO sqlflow_models.attr_label_dimension;

-- from: go/attribute/model_parameters.go (LinearClassifier: sparse_combiner)
-- needs: churn.train
SELECT * FROM churn.train TO TRAIN LinearClassifier WITH
  model.n_classes = 2,
  model.sparse_combiner = "sqrtn"
COLUMN tenure, monthlycharges, INDICATOR(CATEGORY_HASH(contract, 8))
LABEL churn
INTO sqlflow_models.attr_sparse_combiner;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (wide and deep: model.dnn_optimizer with dnn_optimizer.*)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNLinearCombinedClassifier
WITH model.n_classes = 3, model.dnn_hidden_units = [10, 20], train.batch_size = 10, train.epoch = 2,
     model.dnn_optimizer = RMSprop, dnn_optimizer.learning_rate = 0.01
COLUMN sepal_length, sepal_width FOR linear_feature_columns
COLUMN petal_length, petal_width FOR dnn_feature_columns
LABEL class
INTO sqlflow_models.attr_wide_deep;

-- from: doc/sqlflow.org_cn/models.md (DNNLinearCombinedClassifier: linear_optimizer, dnn_dropout, batch_norm, linear_sparse_combiner)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNLinearCombinedClassifier
WITH model.n_classes = 3, model.dnn_hidden_units = [16, 8], model.dnn_dropout = 0.1,
     model.batch_norm = False, model.linear_sparse_combiner = "sum",
     model.linear_optimizer = Ftrl, linear_optimizer.learning_rate = 0.05
COLUMN sepal_length, sepal_width FOR linear_feature_columns
COLUMN petal_length, petal_width FOR dnn_feature_columns
LABEL class
INTO sqlflow_models.attr_wide_deep_linear_opt;

-- from: go/attribute/model_parameters.go (DNNLinearCombinedRegressor: dnn_activation_fn)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN DNNLinearCombinedRegressor
WITH model.dnn_hidden_units = [16, 8], model.dnn_activation_fn = "relu"
COLUMN crim, zn, indus FOR linear_feature_columns
COLUMN rm, age, dis, lstat FOR dnn_feature_columns
LABEL medv
INTO sqlflow_models.attr_wide_deep_regressor;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (train.batch_size, train.epoch, train.max_steps, train.save_checkpoints_steps, train.log_every_n_iter, validation.start_delay_secs, validation.throttle_secs)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10, 20],
     train.batch_size = 10, train.epoch = 6,
     train.max_steps = 200,
     train.save_checkpoints_steps = 10,
     train.log_every_n_iter = 20,
     validation.start_delay_secs = 10, validation.throttle_secs = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.attr_hyper;

-- from: doc/sqlflow.org_cn/params.md (train.verbose; validation.steps)
-- needs: iris.train, iris.test
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, train.verbose = 1, validation.steps = 1,
     validation.select = "SELECT * FROM iris.test"
LABEL class
INTO sqlflow_models.attr_verbose;

-- from: go/codegen/tensorflow/codegen.go (commonAttributes: validation.metrics in TO TRAIN, default "Accuracy")
-- needs: iris.train, iris.test
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, validation.metrics = "Accuracy",
     validation.select = "SELECT * FROM iris.test"
LABEL class
INTO sqlflow_models.attr_val_accuracy;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (validation.metrics = CategoricalAccuracy in TO TRAIN)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, validation.metrics = "CategoricalAccuracy"
LABEL class
INTO sqlflow_models.attr_val_categorical;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (binary classifier, validation.select with a WHERE)
-- needs: iris.train, iris.test
SELECT * FROM iris.train WHERE class <> 2
TO TRAIN DNNClassifier
WITH
	model.n_classes = 2,
	model.hidden_units = [10, 20],
	validation.select = "SELECT * FROM iris.test WHERE class <>2 LIMIT 30"
LABEL class
INTO sqlflow_models.attr_binary;

-- from: doc/sqlflow.org_cn/params.md (validation.metrics: every Keras metric name for a binary classifier)
-- needs: iris.train, iris.test
SELECT * FROM iris.train WHERE class <> 2
TO TRAIN DNNClassifier
WITH model.n_classes = 2,
     validation.metrics = "Accuracy,Precision,Recall,AUC,TruePositives,TrueNegatives,FalsePositives,FalseNegatives,BinaryAccuracy",
     validation.select = "SELECT * FROM iris.test WHERE class <> 2"
LABEL class
INTO sqlflow_models.attr_binary_metrics;

-- from: doc/sqlflow.org_cn/params.md (validation.metrics: Keras regression metric names)
-- needs: boston.train, boston.test
SELECT * FROM boston.train
TO TRAIN DNNRegressor
WITH model.hidden_units = [32, 16],
     validation.metrics = "MeanAbsoluteError,MeanAbsolutePercentageError,MeanSquaredError,RootMeanSquaredError",
     validation.select = "SELECT * FROM boston.test"
LABEL medv
INTO sqlflow_models.attr_regression_metrics;

-- from: doc/sqlflow.org_cn/params.md (validation.metrics: TopKCategoricalAccuracy)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, validation.metrics = "CategoricalAccuracy,TopKCategoricalAccuracy"
LABEL class
INTO sqlflow_models.attr_topk;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (train.num_workers, train.num_ps on a Keras model)
-- needs: iris.train, iris.test
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH
	model.n_classes = 3,
	train.num_workers = 2,
	train.num_ps = 2,
	train.epoch = 10,
	train.batch_size = 4,
	train.verbose = 1,
	validation.select = "select * from iris.test",
	validation.metrics = "CategoricalAccuracy"
LABEL class
INTO sqlflow_models.attr_distributed;

-- from: go/codegen/tensorflow/codegen.go (distributedTrainingAttributes: worker/ps resources)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, train.num_workers = 2, train.num_ps = 1,
     train.worker_cpu = 400, train.worker_gpu = 0, train.ps_cpu = 200, train.ps_gpu = 0,
     train.num_evaluator = 0, train.evaluator_cpu = 200, train.evaluator_gpu = 0
LABEL class
INTO sqlflow_models.attr_distributed_resources;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (BoostedTreesClassifier: n_batches_per_layer, center_bias)
-- needs: iris.train, iris.test
SELECT * FROM iris.train WHERE class != 2
TO TRAIN BoostedTreesClassifier
WITH
	model.n_batches_per_layer = 1,
	model.center_bias = True,
	train.batch_size = 100,
	train.epoch = 10,
	validation.select = "SELECT * FROM iris.test where class!=2"
LABEL class
INTO sqlflow_models.attr_boostedtrees;

-- from: doc/sqlflow.org_cn/models.md (BoostedTreesClassifier: n_trees, max_depth, learning_rate, l1/l2_regularization, tree_complexity)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN BoostedTreesClassifier
WITH model.n_classes = 2, model.n_batches_per_layer = 1, model.n_trees = 100, model.max_depth = 6,
     model.learning_rate = 0.1, model.l1_regularization = 0.0, model.l2_regularization = 0.01,
     model.tree_complexity = 0.0, model.min_node_weight = 0.0
LABEL survived
INTO sqlflow_models.attr_boostedtrees_params;

-- from: go/attribute/model_parameters.go (BoostedTreesRegressor: pruning_mode, quantile_sketch_epsilon)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN BoostedTreesRegressor
WITH model.n_batches_per_layer = 1, model.n_trees = 50, model.pruning_mode = "none",
     model.quantile_sketch_epsilon = 0.01
LABEL medv
INTO sqlflow_models.attr_boostedtrees_regressor;

-- from: doc/sqlflow.org_cn/models.md (xgboost.gbtree binary classification, validation.select)
-- needs: titanic.train, titanic.test
SELECT * FROM titanic.train
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", validation.select = "SELECT * FROM titanic.test"
LABEL survived
INTO sqlflow_models.attr_xgb_binary;

-- from: doc/sqlflow.org_cn/models.md (xgboost.gbtree multi:softmax with num_class)
-- needs: iris.train, iris.test
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softmax", num_class = 3, validation.select = "SELECT * FROM iris.test"
LABEL class
INTO sqlflow_models.attr_xgb_softmax;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (multi:softprob, eta, train.num_workers, validation.select)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN xgboost.gbtree
WITH
	objective = "multi:softprob",
	train.num_boost_round = 1,
	train.num_workers = 1,
	eta = 0.4,
	num_class = 3,
	validation.select = "select * from iris.train"
LABEL class
INTO sqlflow_models.attr_xgb_softprob;

-- from: doc/design/xgboost_on_sqlflow.md (bare-word objective, max_depth, eta)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH
    objective = multi:softmax,
    num_class = 3,
    train.num_boost_round = 2,
    max_depth = 2,
    eta = 1
LABEL class
INTO sqlflow_models.attr_xgb_bare_objective;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: learning_rate, the alias of eta)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", learning_rate = 0.1, max_depth = 5
LABEL medv
INTO sqlflow_models.attr_xgb_learning_rate;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: n_estimators, gamma, min_child_weight, max_delta_step)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", n_estimators = 50, gamma = 0.1, min_child_weight = 1, max_delta_step = 0
LABEL medv
INTO sqlflow_models.attr_xgb_sklearn_names;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: subsample, colsample_bytree/bylevel/bynode)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", subsample = 0.8, colsample_bytree = 0.8,
     colsample_bylevel = 0.9, colsample_bynode = 0.9
LABEL medv
INTO sqlflow_models.attr_xgb_subsample;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: reg_alpha, reg_lambda, base_score, random_state)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", reg_alpha = 0.01, reg_lambda = 1.0, base_score = 0.5, random_state = 42
LABEL medv
INTO sqlflow_models.attr_xgb_regularization;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: scale_pos_weight for unbalanced classes)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", scale_pos_weight = 10, eval_metric = "auc"
LABEL class
INTO sqlflow_models.attr_xgb_scale_pos_weight;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: seed, nthread, n_jobs, verbosity, silent)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", num_class = 3, seed = 7, nthread = 2, n_jobs = 2, verbosity = 0, silent = True
LABEL class
INTO sqlflow_models.attr_xgb_threads;

-- from: go/attribute/model_parameters.go (xgboost.gbtree: missing, importance_type, max_bin)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", missing = -999.0, importance_type = "gain", max_bin = 256
LABEL medv
INTO sqlflow_models.attr_xgb_missing;

-- from: doc/sqlflow.org_cn/models.md (xgboost.gbtree: lambda, alpha, tree_method, sketch_eps)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", lambda = 1.0, alpha = 0.0, tree_method = "approx", sketch_eps = 0.03
LABEL medv
INTO sqlflow_models.attr_xgb_native;

-- from: doc/sqlflow.org_cn/models.md (xgboost.gbtree: grow_policy, max_leaves, num_parallel_tree, predictor)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", tree_method = "hist", grow_policy = "lossguide", max_leaves = 16,
     num_parallel_tree = 1, predictor = "cpu_predictor"
LABEL medv
INTO sqlflow_models.attr_xgb_lossguide;

-- from: doc/sqlflow.org_cn/models.md (xgboost.dart: sample_type, normalize_type, rate_drop, one_drop, skip_drop)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.dart
WITH objective = "reg:squarederror", sample_type = "uniform", normalize_type = "tree",
     rate_drop = 0.1, one_drop = 0, skip_drop = 0.5
LABEL medv
INTO sqlflow_models.attr_xgb_dart;

-- from: doc/sqlflow.org_cn/models.md (xgboost.gblinear: lambda, alpha, updater, feature_selector, top_k)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gblinear
WITH objective = "reg:squarederror", lambda = 0.1, alpha = 0.01, updater = "coord_descent",
     feature_selector = "greedy", top_k = 5
LABEL medv
INTO sqlflow_models.attr_xgb_gblinear;

-- from: go/codegen/xgboost/codegen.go (attributeDictionary: train.disk_cache, train.batch_size, train.epoch)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", train.disk_cache = True, train.batch_size = 64, train.epoch = 2
LABEL medv
INTO sqlflow_models.attr_xgb_disk_cache;

-- from: go/codegen/xgboost/codegen.go (unprefixed num_boost_round, as the docs' sklearn-style users write it)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", num_boost_round = 20
LABEL medv
INTO sqlflow_models.attr_xgb_num_boost_round;

-- from: go/attribute/xgboost_objective_params.go (objective reg:logistic, binary:logitraw, binary:hinge)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN xgboost.gbtree
WITH objective = "binary:hinge"
LABEL survived
INTO sqlflow_models.attr_xgb_hinge;

-- from: go/attribute/xgboost_objective_params.go (objective reg:gamma)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:gamma"
LABEL medv
INTO sqlflow_models.attr_xgb_gamma;

-- from: go/attribute/xgboost_objective_params.go (objective reg:tweedie)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:tweedie"
LABEL medv
INTO sqlflow_models.attr_xgb_tweedie;

-- from: go/attribute/xgboost_objective_params.go (objective reg:squaredlogerror)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squaredlogerror"
LABEL medv
INTO sqlflow_models.attr_xgb_squaredlogerror;

-- from: go/attribute/xgboost_objective_params.go (objective binary:logitraw)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN xgboost.gbtree
WITH objective = "binary:logitraw"
LABEL survived
INTO sqlflow_models.attr_xgb_logitraw;

-- from: go/attribute/xgboost_objective_params.go (objective reg:linear, deprecated name of reg:squarederror)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:linear"
LABEL medv
INTO sqlflow_models.attr_xgb_reg_linear;

-- from: go/codegen/xgboost/codegen.go (eval_metric is free text in SQLFlow: an XGBoost metric name)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", num_class = 3, eval_metric = "mlogloss"
LABEL class
INTO sqlflow_models.attr_xgb_eval_metric;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (TO PREDICT WITH predict.num_workers)
-- needs: iris.test; model sqlflow_models.attr_xgb_softmax
SELECT * FROM iris.test
TO PREDICT iris.attr_xgb_predict.class
WITH
	predict.num_workers = 2
USING sqlflow_models.attr_xgb_softmax;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO PREDICT WITH predict.extra_outputs)
-- needs: iris.test; model sqlflow_models.attr_dnn
SELECT * FROM iris.test
TO PREDICT iris.attr_dnn_predict.class
WITH predict.extra_outputs = "probabilities"
USING sqlflow_models.attr_dnn;

-- from: doc/language_guide.md (TO PREDICT WITH predict.batch_size)
-- needs: boston.test; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.test
TO PREDICT boston.attr_predict.medv
WITH predict.batch_size = 128
USING sqlflow_models.attr_xgb_learning_rate;

-- from: doc/tutorial/apsara2019/carprice_xgboost/README.md (summary.plot_type dot, alpha, sort, max_display)
-- needs: boston.train; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.attr_xgb_learning_rate
WITH
    summary.plot_type = "dot",
    summary.alpha = 1,
    summary.sort = True,
    summary.max_display = 20
USING TreeExplainer;

-- from: doc/tutorial/housing-explain.md (summary.plot_type bar)
-- needs: boston.train; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.attr_xgb_learning_rate
WITH
    summary.plot_type = "bar",
    summary.alpha = 1,
    summary.sort = True
USING TreeExplainer;

-- from: python/runtime/step/xgboost/explain.py (summary.plot_type decision)
-- needs: boston.train; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.attr_xgb_learning_rate
WITH summary.plot_type = "decision"
USING TreeExplainer;

-- from: python/runtime/step/xgboost/explain.py (summary.* passed to shap.summary_plot: violin)
-- needs: boston.train; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.attr_xgb_learning_rate
WITH summary.plot_type = "violin", summary.max_display = 10
USING TreeExplainer;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (bare-word plot type: summary.plot_type=bar)
-- needs: iris.train; model sqlflow_models.attr_xgb_softmax
SELECT * FROM iris.train
TO EXPLAIN sqlflow_models.attr_xgb_softmax
WITH summary.plot_type = bar;

-- from: doc/sqlflow.org_cn/titanic_survival_prediction.cn.md (bare-word plot type: summary.plot_type=dot)
-- needs: titanic.test; model sqlflow_models.attr_xgb_binary
SELECT * FROM titanic.test
TO EXPLAIN sqlflow_models.attr_xgb_binary WITH summary.plot_type = dot;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (label_col with XGBoostExplainer, INTO)
-- needs: titanic.train; model sqlflow_models.attr_xgb_binary
SELECT * FROM titanic.train
TO EXPLAIN sqlflow_models.attr_xgb_binary
WITH label_col = survived
USING XGBoostExplainer
INTO titanic.xgb_explain_result;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (label_col with TreeExplainer on a DNN model, INTO)
-- needs: iris.test; model sqlflow_models.attr_dnn
SELECT * FROM iris.test
TO EXPLAIN sqlflow_models.attr_dnn
WITH label_col = class
USING TreeExplainer
INTO iris.dnn_explain_result;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (label_col without USING)
-- needs: titanic.train; model sqlflow_models.attr_xgb_binary
SELECT * FROM titanic.train
TO EXPLAIN sqlflow_models.attr_xgb_binary
WITH label_col = survived
INTO titanic.explain_result;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (TO EXPLAIN of BoostedTrees INTO a table)
-- needs: iris.test; model sqlflow_models.attr_boostedtrees
SELECT * FROM iris.test WHERE class != 2
TO EXPLAIN sqlflow_models.attr_boostedtrees
INTO iris.boostedtrees_explain_result;

-- from: parser test TestExtendedSyntaxParseToExplain (plots = force: an attribute SQLFlow's parser takes)
-- needs: boston.train; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.train
TO EXPLAIN sqlflow_models.attr_xgb_learning_rate
WITH
  plots = force
USING TreeExplainer;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO EVALUATE: accuracy_score)
-- needs: iris.test; model sqlflow_models.attr_xgb_softmax
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.attr_xgb_softmax
WITH validation.metrics = "accuracy_score"
LABEL class
INTO iris.attr_eval_accuracy_score;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO EVALUATE: accuracy_score,f1_score)
-- needs: titanic.test; model sqlflow_models.attr_xgb_binary
SELECT * FROM titanic.test
TO EVALUATE sqlflow_models.attr_xgb_binary
WITH
	validation.metrics = "accuracy_score,f1_score"
LABEL survived
INTO titanic.attr_eval_f1;

-- from: python/runtime/xgboost/evaluate.py (SKLEARN_METRICS for a binary classifier)
-- needs: titanic.test; model sqlflow_models.attr_xgb_binary
SELECT * FROM titanic.test
TO EVALUATE sqlflow_models.attr_xgb_binary
WITH validation.metrics = "precision_score,recall_score,roc_auc_score,log_loss,balanced_accuracy_score,average_precision_score"
LABEL survived
INTO titanic.attr_eval_sklearn_binary;

-- from: python/runtime/xgboost/evaluate.py (SKLEARN_METRICS for a regressor)
-- needs: boston.test; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.test
TO EVALUATE sqlflow_models.attr_xgb_learning_rate
WITH validation.metrics = "mean_absolute_error,mean_squared_error,r2_score,explained_variance_score,median_absolute_error"
LABEL medv
INTO boston.attr_eval_sklearn_regression;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO EVALUATE: mean_squared_error on a regressor)
-- needs: boston.test; model sqlflow_models.attr_xgb_learning_rate
SELECT * FROM boston.test
TO EVALUATE sqlflow_models.attr_xgb_learning_rate
WITH validation.metrics = "mean_squared_error"
LABEL medv
INTO boston.attr_eval_mse;

-- from: doc/language_guide.md (TO EVALUATE: validation.metrics = "Accuracy,AUC" on a Keras binary classifier)
-- needs: iris.test; model sqlflow_models.attr_binary
SELECT * FROM iris.test WHERE class <> 2
TO EVALUATE sqlflow_models.attr_binary
WITH validation.metrics = "Accuracy,AUC"
LABEL class
INTO iris.attr_eval_keras_binary;

-- from: doc/sqlflow.org_cn/params.md (TO EVALUATE: Keras regression metrics)
-- needs: boston.test; model sqlflow_models.attr_regression_metrics
SELECT * FROM boston.test
TO EVALUATE sqlflow_models.attr_regression_metrics
WITH validation.metrics = "MeanAbsoluteError,MeanSquaredError,RootMeanSquaredError"
LABEL medv
INTO boston.attr_eval_keras_regression;

-- from: parser test TestExtendedSyntaxParseToEvaluate (validation.metrics = "MAE,MSE")
-- needs: boston.test; model sqlflow_models.attr_regression_metrics
SELECT * FROM boston.test
TO EVALUATE sqlflow_models.attr_regression_metrics
WITH validation.metrics = "MAE,MSE"
LABEL medv
INTO boston.attr_eval_short_names;

-- from: doc/sqlflow.org_cn/params.md (TO EVALUATE: Precision, Recall, CategoricalAccuracy on a multiclass Keras model)
-- needs: iris.test; model sqlflow_models.attr_dnn
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.attr_dnn
WITH validation.metrics = "CategoricalAccuracy,Precision,Recall"
LABEL class
INTO iris.attr_eval_keras_multiclass;

-- from: doc/design/model_zoo.md (USING a base model whose own model.* attributes are repeated, equal)
-- needs: iris.train; model sqlflow_models.attr_dnn
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [100, 100],
  train.epoch = 2
LABEL class
USING sqlflow_models.attr_dnn
INTO sqlflow_models.attr_dnn_continued;

-- from: doc/talk/201812/train.sql (unprefixed n_classes, hidden_units: SQLFlow's first releases passed them to the constructor)
-- needs: iris.train
SELECT *
FROM iris.train
TO TRAIN DNNClassifier
WITH
  n_classes = 3,
  hidden_units = [10, 20]
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.attr_old_dnn;

-- from: go/verifier/verifier_test.go (TestVerifyColumnNameAndType: unprefixed n_classes, hidden_units, SELECT with LIMIT)
-- needs: churn.train
SELECT gender, tenure, totalcharges, churn
FROM churn.train LIMIT 10
TO TRAIN DNNClassifier
WITH
  n_classes = 2,
  hidden_units = [10, 20]
COLUMN gender, tenure, totalcharges
LABEL churn
INTO sqlflow_models.attr_old_churn;

-- from: doc/walkthrough.md (unprefixed learning_rate: the optimizer's)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH learning_rate=0.01 LABEL class INTO sqlflow_models.attr_old_learning_rate;

-- from: doc/design/syntax.md (layers, a parameter of the estimator's constructor: the hidden units)
-- needs: creditcard.creditcard
-- note: the design's COLUMN also holds cross(v1, v9, v28), a CROSS without its bucket size, which SQLFlow's COLUMN parser refuses
SELECT * FROM creditcard.creditcard
LIMIT 1000
TO TRAIN DNNClassifier       /* a pre-defined TensorFlow estimator, tf.estimator.DNNClassifier */
WITH layers=[100, 200],   /* a parameter of the Estimator class constructor */
     train.batch_size = 8 /* a parameter of the Estimator.train method */
COLUMN *                  /* all columns as raw features */
LABEL class
INTO sqlflow_models.attr_old_layers;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (CaseTrainPAIKMeans: center_count, idx_table_name, excluded_columns)
-- needs: iris.train
SELECT * FROM iris.train
	TO TRAIN kmeans 
	WITH
		center_count=3,
		idx_table_name=iris.train_test_output_idx,
		excluded_columns=class
	INTO sqlflow_models.attr_pai_kmeans;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (CaseTrainPAIKMeans: TO PREDICT the cluster_index)
-- needs: iris.test; model sqlflow_models.attr_pai_kmeans
SELECT * FROM iris.test
	TO PREDICT iris.attr_kmeans_predict.cluster_index
	USING sqlflow_models.attr_pai_kmeans;

-- from: python/runtime/pai/submitter_test.py (test_submit_pai_kmeans_train_task: model.excluded_columns, model.idx_table_name)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN KMeans
WITH model.excluded_columns="class",
     model.idx_table_name="iris.e2e_test_kmeans_output_idx"
INTO sqlflow_models.attr_pai_kmeans_prefixed;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (CaseTrainPAIRandomForests: TO EXPLAIN WITH label_column)
-- needs: iris.test; model sqlflow_models.attr_xgb_softmax
-- note: SQLFlow's case explains a PAI random forest; here the XGBoost model trained above
SELECT * FROM iris.test
TO EXPLAIN sqlflow_models.attr_xgb_softmax
WITH label_column = class
USING TreeExplainer
INTO iris.rf_model_explain;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (CasePAIMaxComputeTrainTFBTDistributed: train.num_ps on BoostedTrees)
-- needs: iris.train, iris.test
SELECT * FROM iris.train WHERE class < 2
TO TRAIN BoostedTreesClassifier
WITH
	model.center_bias=True,
	model.n_batches_per_layer=70,
	train.num_workers=2,
	train.num_ps=1,
	train.epoch=10,
	validation.select="select * from iris.test"
LABEL class
INTO sqlflow_models.attr_tfbt_distributed;

-- from: go/sql/executor_ir_test.go (testClusteringTrain: train.verbose on DeepEmbeddingClusterModel)
-- needs: iris.train
SELECT (sepal_length - 4.4) / 3.5 as sepal_length, (sepal_width - 2.0) / 2.2 as sepal_width, (petal_length - 1) / 5.9 as petal_length, (petal_width - 0.1) / 2.4 as petal_width
FROM iris.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH
  model.pretrain_dims = [10,10,3],
  model.n_clusters = 3,
  model.pretrain_epochs=5,
  train.batch_size=10,
  train.verbose=1
INTO sqlflow_models.attr_clustering_verbose;

-- from: go/ir/ir_generator_test.go (TestGenerateOptimizeStmt: data.*, worker.*, solver.max_iter of SQLFlow's solving service on PAI)
-- needs: shipment.routes
SELECT * FROM shipment.routes
TO MINIMIZE SUM(distance * shipment * 90 / 1000)
CONSTRAINT SUM(shipment) <= capacity GROUP BY plants,
           SUM(shipment) >= demand GROUP BY markets
WITH variables = "shipment(plants,markets)",
     var_type = "NonNegativeReals",
     data.enable_slice = True,
     data.batch_size = 1,
     worker.core = 16,
     worker.num = 4,
     worker.memory = 8192,
     solver.max_iter = 10
USING glpk
INTO shipment.shipment_result_table;

-- from: go/workflow/couler/katib.go (attributeDictionary: range.num_round, range.max_depth of the Katib submitter); doc/design/katib_on_sqlflow.md
-- needs: iris.train, iris.test
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH
    objective=multi:softmax,
    num_class=3,
    eta=0.1,
    range.num_round=[50, 100],
    range.max_depth=[2, 8],
    validation.select="SELECT * FROM iris.test"
LABEL class
INTO sqlflow_models.attr_katib_xgb;

-- from: doc/sqlflow.org_cn/models.md (KMeans: excluded_columns, the selected columns that are not features, comma-separated)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN kmeans
WITH center_count=2, idx_table_name=iris.kmeans_idx, excluded_columns="sepal_width,class"
INTO sqlflow_models.attr_pai_kmeans_excluded;
