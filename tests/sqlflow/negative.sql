-- SQLFlow corpus: statements SQLFlow's parser rejects (the negative cases of go/parser/*_test.go,
-- and grammar rules of go/parser/extended_syntax_parser.y; one its attribute checker refuses), each
-- with the position of its error:
-- `-- error: line L column C`, counted from the statement's first line (1) and first character (1),
-- at the start of the token the error is about. Check each case as a program of its own: several
-- (unclosed quotes and comments) swallow the rest of a file. Format in README.md.

-- from: parser test TestExtendedSyntaxParseNonSelectStmt (a non-SELECT statement before an extended clause)
-- needs: nothing
-- error: line 1 column 1
-- sqlflow: syntax error (extendedSyntaxParse returns idx 0: the statement's first character)
DROP TABLE TO PREDICT iris.predict.class USING sqlflow_models.neg_model;

-- from: parser test TestExtendedSyntaxParseNonSelectStmt (the same, after three spaces: idx 3)
-- needs: nothing
-- error: line 1 column 4
-- sqlflow: syntax error at the first token after the spaces
   DROP TABLE TO PREDICT iris.predict.class USING sqlflow_models.neg_model;

-- from: parser test TestExtendedSyntaxParseUnmatchedQuotation (an unmatched quote inside the statement: idx 9 of the extended part)
-- needs: iris.train
-- error: line 2 column 10
-- sqlflow: unmatched quotation
SELECT * FROM iris.train
TO TRAIN "some_thing

-- from: parser test TestExtendedSyntaxParseUnmatchedQuotation (an unmatched quote right after the statement's ';')
-- needs: iris.train
-- error: line 2 column 91
-- sqlflow: unmatched quotation (the statement before it parses)
SELECT * FROM iris.train
to train DNNClassifier with model.n_classes = 3 label class into sqlflow_models.neg_model;"

-- from: parser test TestExtendedShowTrainStmt (a word after the model name)
-- needs: nothing
-- error: line 1 column 36
-- sqlflow: syntax error near "bad"
SHOW TRAIN my_dnn_classifier_model bad;

-- from: parser test TestExtendedShowTrainStmt (SHOW TRAIN without a model name: idx 11)
-- needs: nothing
-- error: line 1 column 12
-- sqlflow: syntax error near ";"
SHOW TRAIN ;

-- from: parser test TestExtendedSyntaxParseToRunInvalid (the image name quoted: idx 7 of the extended part)
-- needs: iris.train
-- error: line 2 column 8
-- sqlflow: syntax error near the string
SELECT * FROM iris.train
TO RUN "a_data_scientist/ts_data_processor:1.0";

-- from: parser test TestExtendedSyntaxParseToRunInvalid (a CMD parameter not quoted: idx 50 = line 2 column 5 of the extended part)
-- needs: iris.train
-- error: line 3 column 5
-- sqlflow: syntax error near slide_window_to_row
SELECT * FROM iris.train
TO RUN a_data_scientist/ts_data_processor:1.0
CMD slide_window_to_row;

-- from: parser test TestExtendedSyntaxParseToRunInvalid (an output table quoted: idx 77 = line 3 column 6 of the extended part)
-- needs: iris.train
-- error: line 4 column 6
-- sqlflow: syntax error near "output_table_1"
SELECT * FROM iris.train
TO RUN a_data_scientist/ts_data_processor:1.0
CMD "slide_window_to_row"
INTO "output_table_1";

-- from: parser test TestParseFirstSQLStatement (an unknown character in WITH: b =?? c)
-- needs: iris.train
-- error: line 2 column 46
-- sqlflow: syntax error at '?'
SELECT * FROM iris.train
TO TRAIN DNNClassifier WITH model.n_classes =?? 3 LABEL class INTO sqlflow_models.neg_model;

-- from: parser test TestParseFirstSQLStatement (a SELECT after INTO without ';')
-- needs: iris.train, iris.test
-- error: line 2 column 91
-- sqlflow: syntax error near "select a from b"
SELECT * FROM iris.train
TO TRAIN DNNClassifier WITH model.n_classes = 3 LABEL class INTO sqlflow_models.neg_model SELECT * FROM iris.test;

-- from: parser test TestParserErrorMessage (TO TRAIN followed by a SELECT: near or before "select b f")
-- needs: iris.train
-- error: line 2 column 24
-- sqlflow: syntax error near or before "select b f"
SELECT * FROM iris.train
TO TRAIN DNNClassifier SELECT sepal_length FROM iris.test;

-- from: go/parser/sqlflow_parser_test.go (two statements, the first standard SQL has an error)
-- needs: nothing
-- error: line 1 column 8
-- sqlflow: the standard SQL parser's error on the first statement
SELECT SELECT 1; SELECT 1 TO TRAIN;

-- from: go/parser/sqlflow_parser_test.go (two statements, the second standard SQL has an error)
-- needs: iris.train
-- error: line 1 column 95
-- sqlflow: the standard SQL parser's error on the second statement
SELECT * FROM iris.train TO PREDICT iris.predict.class USING sqlflow_models.neg_model; SELECT SELECT 1;

-- from: go/parser/sqlflow_parser_test.go (a non-SELECT statement before TO PREDICT: describe table ...)
-- needs: iris.train
-- error: line 1 column 1
-- sqlflow: syntax error: an extended clause must follow a SELECT
DESCRIBE iris.train TO PREDICT iris.predict.class USING sqlflow_models.neg_model;

-- from: go/parser/sqlflow_parser_test.go (a SELECT followed by SHOW TRAIN: "select should followed by 'to train/predict/explain'")
-- needs: iris.train
-- error: line 1 column 26
-- sqlflow: syntax error near SHOW
SELECT * FROM iris.train SHOW TRAIN my_model;

-- from: parser test TestRemoveCommentInSQLStatement (SELECT "abc: an unmatched double quote)
-- needs: nothing
-- error: line 1 column 8
-- sqlflow: unmatched quotation
SELECT "abc

-- from: parser test TestRemoveCommentInSQLStatement (SELECT 'a\'bc: the escaped quote does not close the string)
-- needs: nothing
-- error: line 1 column 8
-- sqlflow: unmatched quotation
SELECT 'a\'bc

-- from: parser test TestRemoveCommentInSQLStatement (SELECT a /*/ FROM b: an unclosed block comment)
-- needs: nothing
-- error: line 1 column 10
-- sqlflow: cannot find the end (*/) of the comment /*...*/
SELECT a /*/ FROM b

-- from: go/parser/lexer.go (skipMultipleLineComment: an unclosed block comment inside the extended clause)
-- needs: iris.train
-- error: line 3 column 26
-- sqlflow: cannot find the end (*/) of the comment /*...*/
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3 /* the comment never ends
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (attrsUnion: "attr ... already specified")
-- needs: iris.train
-- error: line 3 column 54
-- sqlflow: attr "model.n_classes" already specified
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3, model.hidden_units = [10], model.n_classes = 3
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (attrs: a trailing comma before LABEL), as written in doc/design/model_zoo.md
-- needs: iris.train
-- error: line 4 column 1
-- sqlflow: syntax error near LABEL
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.hidden_units = [1024, 256],
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (train_clause needs INTO)
-- needs: iris.train
-- error: line 4 column 12
-- sqlflow: syntax error near ";"
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = 3
LABEL class;

-- from: grammar extended_syntax_parser.y (TO TRAIN without an estimator)
-- needs: iris.train
-- error: line 2 column 10
-- sqlflow: syntax error near WITH
SELECT * FROM iris.train
TO TRAIN WITH model.n_classes = 3
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (an attribute without a value)
-- needs: iris.train
-- error: line 4 column 1
-- sqlflow: syntax error near LABEL
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes =
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (a list never closed)
-- needs: iris.train
-- error: line 4 column 1
-- sqlflow: syntax error near LABEL
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.hidden_units = [10, 20
LABEL class
INTO sqlflow_models.neg_model;

-- from: go/parser/lexer.go (Lex: a character no token starts with)
-- needs: iris.train
-- error: line 3 column 24
-- sqlflow: syntax error at '@'
SELECT * FROM iris.train
TO TRAIN DNNClassifier
WITH model.n_classes = @3
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (COLUMN ... FOR without a name)
-- needs: iris.train
-- error: line 5 column 1
-- sqlflow: syntax error near LABEL
SELECT * FROM iris.train
TO TRAIN DNNLinearCombinedClassifier
WITH model.n_classes = 3
COLUMN sepal_length FOR
LABEL class
INTO sqlflow_models.neg_model;

-- from: grammar extended_syntax_parser.y (predict_clause needs USING)
-- needs: iris.test
-- error: line 2 column 30
-- sqlflow: syntax error near ";"
SELECT * FROM iris.test
TO PREDICT iris.predict.class;

-- from: grammar extended_syntax_parser.y (predict_clause: WITH comes before USING)
-- needs: iris.test
-- error: line 4 column 1
-- sqlflow: syntax error near WITH
SELECT * FROM iris.test
TO PREDICT iris.predict.class
USING sqlflow_models.neg_model
WITH predict.batch_size = 1;

-- from: grammar extended_syntax_parser.y (evaluate_clause needs LABEL)
-- needs: iris.test
-- error: line 4 column 1
-- sqlflow: syntax error near INTO
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.neg_model
WITH validation.metrics = "Accuracy"
INTO iris.evaluation_result;

-- from: grammar extended_syntax_parser.y (evaluate_clause needs INTO)
-- needs: iris.test
-- error: line 3 column 12
-- sqlflow: syntax error near ";"
SELECT * FROM iris.test
TO EVALUATE sqlflow_models.neg_model
LABEL class;

-- from: grammar extended_syntax_parser.y (explain_clause: USING comes before INTO)
-- needs: iris.test
-- error: line 4 column 1
-- sqlflow: syntax error near USING
SELECT * FROM iris.test
TO EXPLAIN sqlflow_models.neg_model
INTO iris.explain_result
USING TreeExplainer;

-- from: grammar extended_syntax_parser.y (run_clause: INTO needs CMD before it)
-- needs: iris.train
-- error: line 3 column 1
-- sqlflow: syntax error near INTO
SELECT * FROM iris.train
TO RUN sqlflow/runnable:v0.0.1
INTO train_binning_result;

-- from: grammar extended_syntax_parser.y (optimize_clause needs WITH)
-- needs: woodcarving.products
-- error: line 4 column 1
-- sqlflow: syntax error near INTO
SELECT * FROM woodcarving.products
TO MAXIMIZE SUM(price * amount)
CONSTRAINT amount <= max_num
INTO woodcarving.result_table;

-- from: issue 15 (a misspelled keyword passes sqlml check today)
-- needs: nothing
-- error: line 1 column 1
-- sqlflow: not extended syntax: the database rejects it
SELEC 1;

-- from: go/ir/ir_generator_test.go (TestGenerateTrainStmt writes train.optimizer, which SQLFlow's TensorFlow code generator refuses: go/codegen/tensorflow/codegen.go)
-- needs: iris.train
-- error: line 5 column 3
-- sqlflow: unsupported attribute train.optimizer
SELECT sepal_length, sepal_width, petal_length, class FROM iris.train
TO TRAIN DNNClassifier
WITH
  model.n_classes=2,
  train.optimizer="adam",
  model.hidden_units=[128,64]
LABEL class
INTO sqlflow_models.neg_train_optimizer;

-- from: go/cmd/sqlflowserver/e2e_mysql_test.go (CaseXGBoost: eval_metric=accuracy_score, which XGBoost refuses when SQLFlow trains; the case is not run by SQLFlow's tests)
-- needs: iris.train, iris.test
-- error: line 5 column 15
-- sqlflow: XGBoost: Unknown metric function accuracy_score
SELECT * FROM iris.train TO TRAIN xgboost.gbtree
WITH objective="multi:softprob",
	 num_class=3,
	 validation.select="SELECT * FROM iris.test",
	 eval_metric=accuracy_score
LABEL class
INTO sqlflow_models.my_xgb_multi_class_model;

-- from: doc/design/model_zoo.md (TO PREDICT USING a published model's name, which SQLFlow's parser takes and its executors, loading models from the database by name, do not fetch)
-- needs: nothing
-- error: line 1 column 67
-- sqlflow: (parsed; no executor fetches a published model)
SELECT * FROM employee TO PREDICT employee.predicted_salary USING models.sqlflow.org/public/my_first_model;
