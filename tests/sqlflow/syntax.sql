-- SQLFlow corpus: the lexical rules of SQLFlow's extended syntax (go/parser/lexer.go and its
-- tests): case-insensitive keywords, comments anywhere, single and double quotes, backslash
-- escapes, bare words as values (with '.', ':', '/', '-'), numbers, booleans, lists, keywords
-- inside strings and comments, several statements on a line. Written for sqlml's tests; format
-- in README.md.

-- from: go/parser/lexer_test.go (keywords in any case: Select, froM, tRain, colUmn)
-- needs: iris.train
Select * froM iris.train
to tRain DNNClassifier wItH model.n_classes = 3
colUmn sepal_length, sepal_width, petal_length, petal_width
lAbEl class
iNtO sqlflow_models.syn_mixed_case;

-- from: go/parser/sqlflow_parser_test.go (all lower case)
-- needs: iris.train
select * from iris.train to train DNNClassifier with model.n_classes = 3 label class into sqlflow_models.syn_lower;

-- from: go/parser/sqlflow_parser_test.go (all lower case TO PREDICT)
-- needs: iris.test; model sqlflow_models.syn_lower
select * from iris.test to predict iris.syn_predict.class using sqlflow_models.syn_lower;

-- from: go/parser/extended_syntax_parser_test.go (lower-case feature column functions: embedding, cross, bucket)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN tenure,
  bucket(monthlycharges, [20, 50, 80]),
  cross([contract, internetservice], 64),
  embedding(category_id(paymentmethod, 8), 4),
  indicator(category_hash(gender, 4))
LABEL churn
INTO sqlflow_models.syn_lower_functions;

-- from: go/parser/sqlflow_parser_test.go (TestParseSQLStatementWithComment: comments between clauses, a block comment across lines, a bare "--")
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier  -- comment 1
WITH -- comment 2
	model.hidden_units=[16, 32], -- comment 3
	model.n_classes=3 /* comment
4 */
LABEL class --
INTO sqlflow_models.syn_comments;
-- comment 5
-- comment 6
-- /* comment 7 */

-- from: doc/design/syntax.md (block comments after each clause)
-- needs: iris.train
SELECT * FROM iris.train
LIMIT 1000
TO TRAIN DNNClassifier       /* a TensorFlow estimator */
WITH model.hidden_units = [100, 200],   /* a parameter of the model */
     train.batch_size = 8,              /* a parameter of the training */
     model.n_classes = 3
LABEL class
INTO sqlflow_models.syn_block_comments;

-- from: go/parser/sqlflow_parser_test.go (a statement commented out between two statements)
-- needs: creditcard.creditcard
SELECT * FROM creditcard.creditcard
TO TRAIN DNNClassifier WITH
    train.batch_size=2048,
    model.hidden_units=[200, 100, 50]
LABEL class
INTO sqlflow_fraud_detection_model;

-- -- TRAIN WITH XGBOOST
-- SELECT * FROM creditcard.creditcard
-- TO TRAIN XGBoost.gbtree WITH
--     objective="binary:logistic"
-- LABEL class
-- INTO sqlflow_fraud_detection_model;

-- from: go/parser/sqlflow_parser_test.go (TO PREDICT after commented-out statements; INTO db.table.column)
-- needs: creditcard.test; model sqlflow_fraud_detection_model
SELECT * FROM creditcard.test
TO PREDICT creditcard.sqlflow_fraud_detection_predict.class
USING sqlflow_fraud_detection_model;

-- from: go/parser/sqlflow_parser_test.go (bare TO EXPLAIN after a comment line)
-- needs: creditcard.test; model sqlflow_fraud_detection_model
-- EXPLAIN
SELECT * FROM creditcard.test
TO EXPLAIN sqlflow_fraud_detection_model;

-- from: go/parser/sqlflow_parser_test.go (SHOW TRAIN after a comment line)
-- needs: model sqlflow_fraud_detection_model
-- SHOW TRAIN
SHOW TRAIN  sqlflow_fraud_detection_model;

-- from: doc/tutorial/energe_lstmbasedtimeseries.md (\" inside a double-quoted validation.select)
-- needs: iris.train, iris.test
-- dialect: mysql
-- note: MySQL's SQL, as the tutorial's: "," is a string in MySQL, a column's name in standard SQL (DuckDB, PostgreSQL), where SQLFlow's docs write ','
SELECT sepal_length, sepal_width, petal_length, concat(petal_width, ',', class) AS class FROM iris.train
TO TRAIN DNNRegressor
WITH
  model.hidden_units = [10, 10],
  validation.select = "SELECT sepal_length, sepal_width, petal_length,
  concat(petal_width, \",\", class) AS class FROM iris.test"
LABEL class
INTO sqlflow_models.syn_escaped_double;

-- from: go/parser/lexer_test.go (a string holding only an escaped quote: "\"")
-- needs: feature_derivation_case.train
SELECT c4, class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN CATEGORY_ID(c4, 16, "\"")
LABEL class
INTO sqlflow_models.syn_escaped_only;

-- from: doc/sqlflow.org_cn/titanic_survival_prediction.cn.md (single-quoted validation.select)
-- needs: titanic.train
SELECT * FROM titanic.train
TO TRAIN DNNClassifier WITH
  model.n_classes = 2,
  model.hidden_units = [100, 100],
  validation.select = 'select * from titanic.train'
LABEL survived
INTO titanic.my_titanic_model;

-- from: go/parser/lexer.go (lexString: a backslash escapes the next character; \' inside single quotes)
-- needs: churn.train
SELECT * FROM churn.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2,
     validation.select = 'SELECT * FROM churn.train WHERE contract <> \'Month-to-month\''
LABEL churn
INTO sqlflow_models.syn_escaped_single;

-- from: go/parser/sqlflow_parser_test.go (a ';' and "TO TRAIN" inside a string are text)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3,
     validation.select = "SELECT * FROM iris.train WHERE class <> 3; -- TO TRAIN"
LABEL class
INTO sqlflow_models.syn_semicolon_in_string;

-- from: go/parser/sqlflow_parser_test.go (TestRemoveCommentInSQLStatement: '--' inside a string of the SELECT)
-- needs: iris.train
SELECT '--' AS dashes, sepal_length, sepal_width, petal_length, petal_width, class FROM iris.train -- a comment
TO TRAIN DNNClassifier WITH model.n_classes = 3 -- 2nd comment
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.syn_dashes_in_string;

-- from: go/parser/sqlflow_parser_test.go (a block comment inside the SELECT: SELECT a /*bc*/ FROM b)
-- needs: iris.train
SELECT sepal_length /*bc*/, sepal_width, petal_length, petal_width, class /**/ FROM iris.train
TO TRAIN LinearClassifier WITH model.n_classes = 3
LABEL class
INTO sqlflow_models.syn_block_in_select;

-- from: go/parser/external/test_cases.go (comments in every position of the SELECT)
-- needs: iris.train
select -- comment 1
* -- comment 2
from /* comment 3 */
iris.train /* comment
4*/ -- end
TO TRAIN DNNClassifier WITH model.n_classes = 3 LABEL class INTO sqlflow_models.syn_select_comments;

-- from: doc/design/xgboost_on_sqlflow.md (bare words with ':' as values: objective=multi:softmax)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN xgboost.gbtree
WITH objective=multi:softmax, num_class=3, train.num_boost_round=2
LABEL class
INTO sqlflow_models.syn_bare_colon;

-- from: go/parser/lexer.go (identifiers may hold '.', '/', ':' and '-': bare-word values reg:squarederror, hist, rmse)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective=reg:squarederror, tree_method=hist, eval_metric=rmse
LABEL medv
INTO sqlflow_models.syn_bare_words;

-- from: go/ir/ir_generator.go (inferStringValue: TRUE/FALSE in any case, True, false)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN BoostedTreesClassifier
WITH model.n_classes = 3, model.n_batches_per_layer = 1, model.center_bias = TRUE, model.train_in_memory = false
LABEL class
INTO sqlflow_models.syn_booleans;

-- from: go/parser/lexer.go (reNumber: exponents and signs: 1e-3, 2.5E+1, -1)
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", eta = 1e-1, min_child_weight = 2.5E+0, max_delta_step = 0, train.batch_size = -1
LABEL medv
INTO sqlflow_models.syn_numbers;

-- from: go/parser/lexer_test.go (a list without spaces: [5,10])
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.hidden_units=[5,10],model.n_classes=3,train.epoch=1
LABEL class
INTO sqlflow_models.syn_tight_list;

-- from: go/parser/sqlflow_parser_test.go (no space between two statements)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH model.n_classes = 3 LABEL class INTO sqlflow_models.syn_tight_a;SELECT * FROM iris.train LIMIT 1;

-- from: go/parser/sqlflow_parser_test.go (two statements on one line, the second an extended one)
-- needs: iris.test; model sqlflow_models.syn_tight_a
SELECT * FROM iris.test LIMIT 1; SELECT * FROM iris.test TO PREDICT iris.syn_tight_predict.class USING sqlflow_models.syn_tight_a;

-- from: doc/tutorial/imdb-stackedbilstm.md (indented clauses)
-- needs: imdb.train
SELECT content, class FROM imdb.train
    TO TRAIN DNNClassifier
    WITH
    model.n_classes = 2,
    model.hidden_units = [128, 64]
    LABEL class
    INTO sqlflow_models.my_text_model_en;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (tabs as indentation)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH
	model.n_classes = 3,
	model.hidden_units = [10, 20]
LABEL class
INTO sqlflow_models.syn_tabs;

-- from: doc/language_guide.md (Label Clause: a field named like a keyword, quoted: LABEL "label")
-- needs: feature_derivation_case.train
SELECT c1, c2, class AS label FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
LABEL "label"
INTO sqlflow_models.syn_label_named_label;

-- from: grammar column/funcall (a field named like a keyword, quoted as a function argument: COLUMN takes no bare string)
-- needs: feature_derivation_case.train
SELECT c1 AS "column", c2 AS "into", class FROM feature_derivation_case.train
TO TRAIN DNNClassifier
WITH model.n_classes = 2
COLUMN BUCKET("column", [1, 2, 3]), BUCKET("into", [1, 2, 3])
LABEL class
INTO sqlflow_models.syn_keyword_columns;

-- from: go/parser/lexer_test.go (identifiers with digits and underscores: a1_2b; x.y.z names)
-- needs: iris.train
SELECT sepal_length AS a1_2b, sepal_width, petal_length, petal_width, class FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
COLUMN a1_2b, sepal_width
LABEL class
INTO sqlflow_models.syn_a1_2b;

-- from: grammar expr: parenthesised and negative values, the '-' of UMINUS
-- needs: boston.train
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH objective = "reg:squarederror", base_score = (0.5), missing = -1
LABEL medv
INTO sqlflow_models.syn_paren_value;

-- from: go/parser/lexer.go (skipSpaces: spaces around '=' and ',' or none)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes=3 , train.epoch =2, train.batch_size= 8
LABEL class
INTO sqlflow_models.syn_spacing;

-- from: doc/tutorial/iris-dnn.md (TO TRAIN on the same line as the SELECT)
-- needs: iris.train
SELECT * FROM iris.train TO TRAIN DNNClassifier WITH
  model.n_classes = 3,
  model.hidden_units = [10, 10],
  train.epoch = 10
COLUMN sepal_length, sepal_width, petal_length, petal_width
LABEL class
INTO sqlflow_models.syn_iris_tutorial;

-- from: go/parser/lexer.go (skipSingleLineComment: a comment, then the ';' on its own line)
-- needs: iris.test; model sqlflow_models.syn_iris_tutorial
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.syn_iris_tutorial
LABEL class
INTO iris.syn_eval -- the evaluation table
;

-- from: go/parser/lexer.go (keywords are recognised only as whole words: a model named train_into_label)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
LABEL class
INTO sqlflow_models.train_into_label;

-- from: doc/tutorial/imdb-stackedbilstm.md (Chinese text: unicode in a string value)
-- needs: iris.train
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, validation.select = "SELECT * FROM iris.train WHERE class <> 2 -- 验证"
LABEL class
INTO sqlflow_models.syn_unicode;

-- from: go/cmd/sqlflowserver/e2e_workflow_test.go (CaseBackticksInSQL: MySQL's backquoted names in the SELECT)
-- needs: iris.train, iris.test
SELECT `sepal_length`, `class` FROM iris.train
	TO TRAIN DNNClassifier
	WITH
		model.n_classes = 3,
		model.hidden_units = [10, 20],
		validation.select="select * from iris.test"
	LABEL class
	INTO sqlflow_models.syn_backticks;
