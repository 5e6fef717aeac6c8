-- A distributed TO TRAIN: an XGBoostJob and a TFJob on Kubernetes; locally XGBoost in train.workers processes, Keras in-process.
SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree
  WITH objective = 'reg:squarederror', train.workers = 2 LABEL price INTO price_xgb;
SELECT area, rooms, price FROM houses TO TRAIN DNNRegressor
  WITH train.distributed = true, train.ps = 1 LABEL price INTO price_dnn;
