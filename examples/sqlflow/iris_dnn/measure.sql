-- The model the tutorial trains last (sqlflow_models.AutoClassifier), scored on iris.test.
SELECT * FROM iris.test TO EVALUATE sqlflow_models.my_dnn_model WITH validation.metrics = "accuracy_score" LABEL class INTO iris.evaluation;

-- expect: SELECT accuracy_score FROM iris.evaluation >= 0.98   -- doc/tutorial/iris-dnn.md reports accuracy 0.98 after tuning and with AutoClassifier
-- known-short: the tutorial's last model, sqlflow_models.AutoClassifier with train.epoch = 10, is sqlml's DNNClassifier of [64, 32] units
-- known-short: trained 10 epochs of train.batch_size 32 (30 gradient steps; SQLFlow, whose default batch is 1, takes 1,100): accuracy 0.9 on iris.test,
-- known-short: where SQLFlow's doc reports 0.98 (the tuned DNN before it reaches 1.0)
