-- A distributed TO TRAIN: an XGBoostJob on Kubernetes, locally XGBoost in train.workers processes; Keras trains in one process (train.workers, as SQLFlow's PAI programs give it, is not applied).
SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree
  WITH objective = 'reg:squarederror', train.workers = 2 LABEL price INTO price_xgb;
SELECT area, rooms, price FROM houses TO TRAIN DNNRegressor
  WITH train.workers = 2, train.ps = 1 LABEL price INTO price_dnn;
