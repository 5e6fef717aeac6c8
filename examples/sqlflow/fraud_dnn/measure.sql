-- How well the fraud tutorial's model learned (sqlml's measurement, not SQLFlow's text).
-- doc/tutorial/fraud-dnn.md reports no figure. Its Chinese version
-- (doc/sqlflow.org_cn/tutorials/fraud-dnn.cn.md, "训练DNNClassifier") reports, for another
-- DNNClassifier statement on a 50/50 downsample of the Kaggle set: auc 0.9389,
-- precision 0.816, recall 0.9622, accuracy 0.8676. AUC and precision are compared with
-- those figures; recall and accuracy depend on the share of frauds (2% here, 50% there),
-- so recall has a bar of its own and accuracy none.

-- The model on creditcard.holdout: rows from the same generator it never saw.
SELECT * FROM creditcard.holdout
TO EVALUATE creditcard.creditcard_deep_model
WITH validation.metrics = "roc_auc_score,precision_score,recall_score"
LABEL class
INTO creditcard.evaluate;

SELECT * FROM creditcard.evaluate;

-- expect: SELECT roc_auc_score FROM creditcard.evaluate >= 0.9389   -- fraud-dnn.cn.md's auc
-- expect: SELECT precision_score FROM creditcard.evaluate >= 0.816   -- fraud-dnn.cn.md's precision
-- expect: SELECT recall_score FROM creditcard.evaluate >= 0.7   -- no comparable figure in SQLFlow's docs: most frauds (2% of the rows) caught on unseen rows
-- expect: SELECT AVG(class) FROM creditcard.predict >= 0.9   -- no figure in SQLFlow's docs: the tutorial's TO PREDICT of the fraud rows finds most as frauds
