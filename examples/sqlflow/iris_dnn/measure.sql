-- The model the tutorial trains last (sqlflow_models.AutoClassifier), scored on iris.test.
SELECT * FROM iris.test TO EVALUATE sqlflow_models.my_dnn_model WITH validation.metrics = "accuracy_score" LABEL class INTO iris.evaluation;

-- expect: SELECT accuracy_score FROM iris.evaluation >= 0.98   -- doc/tutorial/iris-dnn.md reports accuracy 0.98 after tuning and with AutoClassifier
