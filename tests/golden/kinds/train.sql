-- TO TRAIN: an XGBoost model and a Keras one with feature columns.
SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree
  WITH objective = 'reg:squarederror', max_depth = 3, train.num_boost_round = 20
  LABEL price INTO price_xgb;
SELECT * FROM houses TO TRAIN DNNRegressor
  WITH model.hidden_units = [8, 4], train.epoch = 5
  COLUMN NUMERIC(area), BUCKET(NUMERIC(rooms), [2, 4])
  LABEL price INTO price_dnn;
