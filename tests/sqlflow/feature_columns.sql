-- SQLFlow corpus: feature columns as SQLFlow documents them (doc/language_guide.md, Feature
-- Columns; go/ir/ir_generator.go parses them): DENSE, SPARSE, CATEGORY_ID, SEQ_CATEGORY_ID,
-- CATEGORY_HASH, WEIGHTED_CATEGORY, EMBEDDING, INDICATOR, CROSS, BUCKET, their nesting, the
-- DENSE/SPARSE arguments (shape, delimiter, dtype, delimiter_kv, dtype_key), COMMA, column-name
-- patterns, COLUMN *, COLUMN ... FOR, and NUMERIC from the design docs.
-- Written for sqlml's tests; format in README.md.

-- from: doc/language_guide.md (plain fields)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.fc_plain;

-- from: grammar column "'*'" (COLUMN *: every selected field but the label)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN *
LABEL class
INTO sqlflow_models.fc_star;

-- from: grammar column "'*'" with an XGBoost estimator
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror"
COLUMN *
LABEL medv
INTO sqlflow_models.fc_star_xgb;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (xgboost with BUCKET over a plain column)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", num_class = 3
COLUMN BUCKET(petal_length, [0, 1, 2, 3, 4, 5]), sepal_length, sepal_width, petal_width
LABEL class
INTO sqlflow_models.fc_xgb_bucket;

-- from: doc/language_guide.md (BUCKET boundaries as floats: [0., 1., 2.])
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN sepal_length, sepal_width, BUCKET(petal_length, [0., 1., 2.]), petal_width
LABEL class
INTO sqlflow_models.fc_bucket_float;

-- from: go/ir/ir_generator.go (parseBucketColumn: BUCKET(DENSE(...), boundaries))
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN BUCKET(DENSE(petal_length, 1), [1, 2, 4]), sepal_length
LABEL class
INTO sqlflow_models.fc_bucket_dense;

-- from: doc/design/numeric_column_clause.md (BUCKET over NUMERIC)
-- needs: boston.train
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT * FROM boston.train
TO TRAIN DNNRegressor
WITH model.hidden_units = [16]
COLUMN BUCKET(NUMERIC(age), [20, 40, 60, 80]), rm, lstat
LABEL medv
INTO sqlflow_models.fc_bucket_numeric;

-- from: doc/design/numeric_column_clause.md (NUMERIC over a field)
-- needs: boston.train
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT * FROM boston.train
TO TRAIN DNNRegressor
WITH model.hidden_units = [16]
COLUMN NUMERIC(crim), NUMERIC(rm), NUMERIC(lstat)
LABEL medv
INTO sqlflow_models.fc_numeric;

-- from: doc/design/numeric_column_clause.md (NUMERIC with a shape: a comma-separated vector)
-- needs: feature_derivation_case.train (c3 holds "1,4,2,3")
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN NUMERIC(c3, 4)
LABEL class
INTO sqlflow_models.fc_numeric_shape;

-- from: doc/design/numeric_column_clause.md (NUMERIC(DENSE(...)))
-- needs: feature_derivation_case.train
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN NUMERIC(DENSE(c3, 4))
LABEL class
INTO sqlflow_models.fc_numeric_dense;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (DENSE(c3, 4) lower-case column keyword)
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c3, 4)
LABEL class
INTO sqlflow_models.fc_dense;

-- from: go/ir/ir_generator_test.go (DENSE with a list shape and COMMA)
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c3, [4], COMMA)
LABEL class
INTO sqlflow_models.fc_dense_list_shape;

-- from: doc/language_guide.md (DENSE(field, shape[, delimiter, dtype]) with a quoted delimiter and dtype)
-- needs: feature_derivation_case.train
SELECT c4, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c4, 4, ",", "float")
LABEL class
INTO sqlflow_models.fc_dense_dtype;

-- from: go/ir/ir_generator_test.go (DENSE(dense, none, comma): shape none; DENSE(item, 1, comma, int))
-- needs: feature_derivation_case.train
SELECT c3, c1, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c3, none, comma),
       DENSE(c1, 1, comma, int)
LABEL class
INTO sqlflow_models.fc_dense_none;

-- from: doc/tutorial/cora-gcn.md (DENSE(field) without a shape: inferred)
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c3)
LABEL class
INTO sqlflow_models.fc_dense_no_shape;

-- from: go/ir/ir_generator_test.go (DENSE with a 2-d shape)
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN DENSE(c3, [2, 2])
LABEL class
INTO sqlflow_models.fc_dense_2d;

-- from: doc/design/numeric_column_clause.md (SPARSE(field, shape))
-- needs: feature_derivation_case.train (c5 holds "93,12,1")
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN SPARSE(c5, 1000)
LABEL class
INTO sqlflow_models.fc_sparse;

-- from: go/ir/ir_generator_test.go (SPARSE(field, shape, COMMA))
-- needs: feature_derivation_case.train
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN SPARSE(c5, 1000, COMMA)
LABEL class
INTO sqlflow_models.fc_sparse_comma;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (SPARSE(field, shape, COMMA, int) several times)
-- needs: sparse.train
SELECT * FROM sparse.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN SPARSE(deep_id, 15033, COMMA, int),
       SPARSE(user_space_stat, 310, COMMA, int),
       SPARSE(user_behavior_stat, 511, COMMA, int),
       SPARSE(space_stat, 418, COMMA, int)
LABEL l
INTO sqlflow_models.fc_sparse_int;

-- from: issue 15 / doc/language_guide.md (SPARSE key-value: SPARSE(c, 10, ",", "int", ":", "float"))
-- needs: kv.train (feature holds "0:0.2,3:0.5")
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN SPARSE(feature, 128, ",", "int", ":", "float")
LABEL label_col
INTO sqlflow_models.fc_sparse_kv;

-- from: go/ir/ir_generator_test.go (SPARSE key-value with "-" as the list delimiter)
-- needs: kv.train
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN SPARSE(feature, 10000, "-", "int", ":", "float")
LABEL label_col
INTO sqlflow_models.fc_sparse_kv_dash;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (xgboost over a key-value SPARSE column)
-- needs: kv.train
SELECT feature, label_col FROM kv.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror"
COLUMN SPARSE(feature, 128, COMMA, "int", ":", "float")
LABEL label_col
INTO sqlflow_models.fc_xgb_sparse_kv;

-- from: doc/design/numeric_column_clause.md (NUMERIC(SPARSE(...)))
-- needs: feature_derivation_case.train
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN NUMERIC(SPARSE(c5, 1000))
LABEL class
INTO sqlflow_models.fc_numeric_sparse;

-- from: doc/language_guide.md (CATEGORY_ID(field, BUCKET_SIZE))
-- needs: housing.train (f9 int)
SELECT f9, target FROM housing.train
TO TRAIN DNNRegressor WITH model.hidden_units = [10, 20]
COLUMN EMBEDDING(CATEGORY_ID(f9, 1000), 2, "sum")
LABEL target
INTO sqlflow_models.fc_category_id_embedding;

-- from: go/ir/ir_generator_test.go (CATEGORY_ID on its own)
-- needs: feature_derivation_case.train
SELECT c1, c6, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN c1, CATEGORY_ID(c6, 8)
LABEL class
INTO sqlflow_models.fc_category_id;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (CATEGORY_ID(field, size, COMMA) inside EMBEDDING)
-- needs: text_cn.train
SELECT news_title, class_id FROM text_cn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 17, model.hidden_units = [16, 8]
COLUMN EMBEDDING(CATEGORY_ID(news_title, 16000, COMMA), 128, mean)
LABEL class_id
INTO sqlflow_models.fc_category_id_comma;

-- from: go/ir/ir_generator_test.go (CATEGORY_ID(SPARSE(...), size))
-- needs: feature_derivation_case.train
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN CATEGORY_ID(SPARSE(c5, 10000, COMMA), 128)
LABEL class
INTO sqlflow_models.fc_category_id_sparse;

-- from: doc/language_guide.md (CATEGORY_ID(DENSE(...), size))
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN INDICATOR(CATEGORY_ID(DENSE(c3, 4, COMMA, "int"), 10))
LABEL class
INTO sqlflow_models.fc_category_id_dense;

-- from: go/ir/ir_generator_test.go (CATEGORY_ID(SPARSE(field, shape, COMMA), size) inside EMBEDDING)
-- needs: text_cn.train
SELECT news_title, class_id FROM text_cn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 17
COLUMN EMBEDDING(CATEGORY_ID(SPARSE(news_title, 16000, COMMA), 16000), 128, mean)
LABEL class_id
INTO sqlflow_models.fc_embedding_category_sparse;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (column-name pattern "f10|f9|f4")
-- needs: housing.train, housing.test
SELECT * FROM housing.train
TO TRAIN DNNRegressor WITH
    model.hidden_units = [10, 20],
    validation.select = "SELECT * FROM housing.test"
COLUMN INDICATOR(CATEGORY_ID("f10|f9|f4", 1000))
LABEL target
INTO sqlflow_models.fc_pattern;

-- from: go/ir/derivation.go (a pattern is a case-insensitive regular expression over the selected fields)
-- needs: housing.train
SELECT * FROM housing.train
TO TRAIN DNNRegressor WITH model.hidden_units = [10]
COLUMN EMBEDDING(CATEGORY_ID("F(4|9)", 100), 4, mean), f1, f2, f3
LABEL target
INTO sqlflow_models.fc_pattern_case;

-- from: go/ir/derivation.go (a pattern as the field of INDICATOR(CATEGORY_ID(...)) with XGBoost; a quoted field in BUCKET)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", num_class = 3
COLUMN INDICATOR(CATEGORY_ID("sepal_.*", 100)), BUCKET("petal_length", [1, 2, 3])
LABEL class
INTO sqlflow_models.fc_pattern_plain;

-- from: go/ir/ir_generator_test.go (SEQ_CATEGORY_ID(field, size))
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(SEQ_CATEGORY_ID(c3, 512), 8, sum)
LABEL class
INTO sqlflow_models.fc_seq_category_id;

-- from: go/ir/ir_generator_test.go (SEQ_CATEGORY_ID(SPARSE(...), size))
-- needs: feature_derivation_case.train
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(SEQ_CATEGORY_ID(SPARSE(c5, 10000, COMMA), 128), 8)
LABEL class
INTO sqlflow_models.fc_seq_category_sparse;

-- from: doc/tutorial/imdb-stackedbilstm.md (EMBEDDING(SEQ_CATEGORY_ID(content, 16000), 128, sum))
-- needs: imdb.train
SELECT content, class FROM imdb.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2, model.hidden_units = [128, 64]
COLUMN EMBEDDING(SEQ_CATEGORY_ID(content, 16000), 128, sum)
LABEL class
INTO sqlflow_models.fc_imdb_seq;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (SEQ_CATEGORY_ID(field, size, COMMA))
-- needs: text_cn.train
SELECT news_title, class_id FROM text_cn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 17
COLUMN EMBEDDING(SEQ_CATEGORY_ID(news_title, 1600, COMMA), 128, mean)
LABEL class_id
INTO sqlflow_models.fc_seq_comma;

-- from: doc/language_guide.md (CATEGORY_HASH(field, BUCKET_SIZE))
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN tenure, monthlycharges, INDICATOR(CATEGORY_HASH(paymentmethod, 16)), EMBEDDING(CATEGORY_HASH(customerid, 1000), 8)
LABEL churn
INTO sqlflow_models.fc_category_hash;

-- from: doc/design/xgboost_feature_column.md (INDICATOR(CATEGORY_HASH(...)) with XGBoost)
-- needs: feature_derivation_case.train
SELECT c6, c1, class FROM feature_derivation_case.train
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic"
COLUMN INDICATOR(CATEGORY_HASH(c6, 10)), c1
LABEL class
INTO sqlflow_models.fc_xgb_indicator_hash;

-- from: doc/language_guide.md (CATEGORY_HASH(SPARSE(...), size))
-- needs: feature_derivation_case.train
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(CATEGORY_HASH(SPARSE(c5, 1000, COMMA), 64), 8)
LABEL class
INTO sqlflow_models.fc_category_hash_sparse;

-- from: go/ir/ir_generator.go (parseCategoryHashColumn: CATEGORY_HASH(field, size, delimiter))
-- needs: feature_derivation_case.train
SELECT c4, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN INDICATOR(CATEGORY_HASH(c4, 32, COMMA))
LABEL class
INTO sqlflow_models.fc_category_hash_delim;

-- from: go/ir/ir_generator_test.go (WEIGHTED_CATEGORY(CATEGORY_ID(SPARSE(kv...))))
-- needs: kv.train
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN INDICATOR(WEIGHTED_CATEGORY(CATEGORY_ID(SPARSE(feature, 128, ",", "int", ":", "float"), 128)))
LABEL label_col
INTO sqlflow_models.fc_weighted_category_id;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (EMBEDDING(WEIGHTED_CATEGORY(CATEGORY_HASH(SPARSE(kv...)))))
-- needs: kv.train
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(
	WEIGHTED_CATEGORY(CATEGORY_HASH(SPARSE(feature, 10, ",", "int", ":", "float"), 10)),
	4, "sum")
LABEL label_col
INTO sqlflow_models.fc_weighted_category_hash;

-- from: go/ir/ir_generator_test.go (WEIGHTED_CATEGORY with a "-" delimiter)
-- needs: kv.train
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(WEIGHTED_CATEGORY(CATEGORY_ID(SPARSE(feature, 10000, "-", "int", ":", "float"), 128)), 16, sum)
LABEL label_col
INTO sqlflow_models.fc_weighted_dash;

-- from: go/ir/ir_generator.go (EMBEDDING(SPARSE(kv...)) means a weighted category)
-- needs: kv.train
SELECT * FROM kv.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(SPARSE(feature, 10000, "-", "int", ":", "float"), 128, sum)
LABEL label_col
INTO sqlflow_models.fc_embedding_sparse_kv;

-- from: doc/language_guide.md (EMBEDDING(field, SIZE): the category is derived)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN tenure, EMBEDDING(contract, 4), EMBEDDING(internetservice, 4)
LABEL churn
INTO sqlflow_models.fc_embedding_field;

-- from: go/ir/derivation_test.go (EMBEDDING(field, size, sum), EMBEDDING(SPARSE(...), size, sum), INDICATOR(field))
-- needs: feature_derivation_case.train
SELECT * FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(c3, 128, sum), EMBEDDING(SPARSE(c5, 10000, COMMA), 128, sum), INDICATOR(c3)
LABEL class
INTO sqlflow_models.fc_derivation_mix;

-- from: doc/design/feature_derivation.md (EMBEDDING combiner as a quoted string)
-- needs: feature_derivation_case.train
SELECT c3, c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(c3, 128, "sum"),
       EMBEDDING(SPARSE(c5, [1000000]), 512, "sum")
LABEL class
INTO sqlflow_models.fc_embedding_quoted;

-- from: doc/language_guide.md (EMBEDDING combiner sqrtn)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN tenure, EMBEDDING(CATEGORY_ID(paymentmethod, 8), 4, sqrtn)
LABEL churn
INTO sqlflow_models.fc_embedding_sqrtn;

-- from: doc/language_guide.md (EMBEDDING with an INITIALIZER)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN tenure, EMBEDDING(CATEGORY_ID(contract, 8), 4, mean, truncated_normal_initializer)
LABEL churn
INTO sqlflow_models.fc_embedding_initializer;

-- from: go/ir/ir_generator_test.go (EMBEDDING(SPARSE(field, shape, COMMA, "int"), size, sum))
-- needs: feature_derivation_case.train
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(SPARSE(c5, 10000, COMMA, "int"), 128, sum)
LABEL class
INTO sqlflow_models.fc_embedding_sparse_int;

-- from: doc/design/numeric_column_clause.md (EMBEDDING(NUMERIC(SPARSE(...)), size))
-- needs: feature_derivation_case.train
-- note: NUMERIC is in a design doc only; SQLFlow's go/ir/ir_generator.go has no NUMERIC (sqlml has)
SELECT c5, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(NUMERIC(SPARSE(c5, 1000)), 16)
LABEL class
INTO sqlflow_models.fc_embedding_numeric_sparse;

-- from: doc/design/feature_derivation.md (EMBEDDING(DENSE(...), size))
-- needs: feature_derivation_case.train
SELECT c3, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN EMBEDDING(DENSE(c3, [4]), 8, "sum")
LABEL class
INTO sqlflow_models.fc_embedding_dense;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (EMBEDDING(CROSS([...], n), size, 'sum'))
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN EMBEDDING(CROSS([petal_width, petal_length], 10), 128, 'sum'), sepal_length
LABEL class
INTO sqlflow_models.fc_embedding_cross;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (EMBEDDING(CROSS(...)) with 'sqrtn')
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN EMBEDDING(CROSS([petal_width, petal_length], 10), 128, 'sqrtn')
LABEL class
INTO sqlflow_models.fc_embedding_cross_sqrtn;

-- from: go/ir/derivation_test.go (CROSS([c4, c5], 128), CROSS([c1, c2], 256))
-- needs: feature_derivation_case.train
SELECT * FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN c1, c2, CROSS([c4, c6], 128), CROSS([c1, c2], 256)
LABEL class
INTO sqlflow_models.fc_cross;

-- from: doc/language_guide.md (CROSS of two feature columns: BUCKET and CATEGORY_HASH)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN LinearClassifier
WITH model.n_classes = 2
COLUMN CROSS([BUCKET(tenure, [12, 24, 48]), CATEGORY_HASH(contract, 8)], 64), monthlycharges
LABEL churn
INTO sqlflow_models.fc_cross_bucket_hash;

-- from: go/ir/ir_generator_test.go (INDICATOR(CATEGORY_ID(...)), INDICATOR(field), INDICATOR(SPARSE(...)))
-- needs: feature_derivation_case.train
SELECT c4, c5, c6, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN INDICATOR(CATEGORY_ID(c6, 512)), INDICATOR(c4), INDICATOR(SPARSE(c5, 10000, COMMA, "int"))
LABEL class
INTO sqlflow_models.fc_indicator;

-- from: go/cmd/sqlflowserver/e2e_pai_maxcompute_test.go (COLUMN ... for dnn_feature_columns / for linear_feature_columns, lower-case for)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNLinearCombinedClassifier WITH
		model.dnn_hidden_units = [10, 20], model.n_classes = 3
COLUMN EMBEDDING(CATEGORY_ID(sepal_length, 20), 2, "sum") for dnn_feature_columns
COLUMN EMBEDDING(CATEGORY_ID(sepal_width, 20), 2, "sum") for linear_feature_columns
LABEL class
INTO sqlflow_models.fc_wide_deep_embedding;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (deep wide regressor with INDICATOR for the linear part)
-- needs: housing.train
SELECT f9, f10, target FROM housing.train
TO TRAIN DNNLinearCombinedRegressor WITH
		model.dnn_hidden_units = [10, 20]
COLUMN EMBEDDING(CATEGORY_ID(f9, 25), 2, "sum") for dnn_feature_columns
COLUMN INDICATOR(CATEGORY_ID(f10, 712)) for linear_feature_columns
LABEL target
INTO sqlflow_models.fc_wide_deep_regressor;

-- from: doc/language_guide.md (COLUMN ... FOR, the linear part listed last)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNLinearCombinedClassifier
WITH model.dnn_hidden_units = [32, 16]
COLUMN EMBEDDING(CATEGORY_ID(paymentmethod, 8), 4), tenure, monthlycharges FOR dnn_feature_columns
COLUMN INDICATOR(contract), CROSS([contract, internetservice], 32) FOR linear_feature_columns
LABEL churn
INTO sqlflow_models.fc_wide_deep_churn;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (many SPARSE and EMBEDDING(CATEGORY_ID(field, size, COMMA)) columns)
-- needs: sparse.train
SELECT * FROM sparse.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2, model.hidden_units = [64, 32]
COLUMN SPARSE(deep_id, 15033, COMMA, int),
       EMBEDDING(CATEGORY_ID(deep_id, 15033, COMMA), 512, mean),
       EMBEDDING(CATEGORY_ID(user_space_stat, 310, COMMA), 64, mean)
LABEL l
INTO sqlflow_models.fc_sparse_embeddings;

-- from: doc/design/xgboost_feature_column.md (XGBoost with CATEGORY_ID and DENSE)
-- needs: feature_derivation_case.train
SELECT c1, c3, c6, class FROM feature_derivation_case.train
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic"
COLUMN c1, DENSE(c3, 4), CATEGORY_ID(c6, 8)
LABEL class
INTO sqlflow_models.fc_xgb_mixed;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (TO PREDICT of a model trained with a pattern)
-- needs: housing.test; model sqlflow_models.fc_pattern
SELECT * FROM housing.test
TO PREDICT housing.predict.class
USING sqlflow_models.fc_pattern;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (caseXGBoostSparseKeyValueColumn: SPARSE(c1) over LIBSVM key-value lists, "1:0.5 3:-1.5 5:6.7")
-- needs: xgboost_sparse_data.train
SELECT c1, label_col FROM xgboost_sparse_data.train
TO TRAIN xgboost.gbtree
WITH
	num_class = 3,
	objective = "multi:softprob",
	train.num_boost_round = 20
COLUMN SPARSE(c1)
LABEL label_col
INTO sqlflow_models.xgb_kv_column_trained_model;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (caseXGBoostSparseKeyValueColumn: SPARSE(c1, 11), the shape given)
-- needs: xgboost_sparse_data.train
SELECT c1, label_col FROM xgboost_sparse_data.train
TO TRAIN xgboost.gbtree
WITH
	num_class = 3,
	objective = "multi:softprob",
	train.num_boost_round = 20
COLUMN SPARSE(c1,11)
LABEL label_col
INTO sqlflow_models.xgb_kv_column_trained_model;

-- from: go/cmd/sqlflowserver/e2e_common_cases.go (caseXGBoostSparseKeyValueColumn: TO PREDICT db.table.column, the label's column replaced)
-- needs: xgboost_sparse_data.train; model sqlflow_models.xgb_kv_column_trained_model
SELECT c1, label_col FROM xgboost_sparse_data.train TO PREDICT xgboost_sparse_data.xgb_kv_column_predict_table.new_label_col USING sqlflow_models.xgb_kv_column_trained_model;
