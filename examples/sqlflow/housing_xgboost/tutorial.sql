-- doc/tutorial/housing-xgboost.md, The Dataset
describe boston.train;

-- doc/tutorial/housing-xgboost.md, The Dataset
describe boston.test;

-- doc/tutorial/housing-xgboost.md, Fit Boston Housing Dataset
SELECT * FROM boston.train
TO TRAIN xgboost.gbtree
WITH
    objective="reg:squarederror",
    train.num_boost_round = 30
COLUMN crim, zn, indus, chas, nox, rm, age, dis, rad, tax, ptratio, b, lstat
LABEL medv
INTO sqlflow_models.my_xgb_regression_model;

-- doc/tutorial/housing-xgboost.md, Predict the Housing Price
SELECT * FROM boston.test
TO PREDICT boston.predict.medv
USING sqlflow_models.my_xgb_regression_model;

-- doc/tutorial/housing-xgboost.md, Predict the Housing Price
SELECT * FROM boston.predict;
