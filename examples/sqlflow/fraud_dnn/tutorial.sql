-- SQLFlow's credit-card fraud tutorial, its statements in order as the doc writes them
-- (only the %%sqlflow lines dropped). The data: data.py (synthetic, see its docstring).

-- doc/tutorial/fraud-dnn.md, "The Credit Card Fraud Detection Example"
SELECT * from creditcard.creditcard limit 5;

-- doc/tutorial/fraud-dnn.md, "Train a DNN Model Using SQLFlow"
SELECT * from creditcard.creditcard
TO TRAIN DNNClassifier
WITH model.n_classes=2, model.hidden_units=[128,32], train.epoch=100
COLUMN time,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10,v11,v12,v13,v14,v15,v16,v17,v18,v19,v20,v21,v22,v23,v24,v25,v26,v27,v28,amount
LABEL class
INTO creditcard.creditcard_deep_model;

-- doc/tutorial/fraud-dnn.md, "Run Predict"
SELECT * from creditcard.creditcard
WHERE class=1
TO PREDICT creditcard.predict.class
USING creditcard.creditcard_deep_model;

-- doc/tutorial/fraud-dnn.md, "Run Predict"
SELECT * from creditcard.predict;
