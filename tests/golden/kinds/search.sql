-- A searched TO TRAIN: trials of candidate values, the best kept.
SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree
  WITH objective = 'reg:squarederror', eta = CHOICE(0.1, 0.3),
  max_depth = INT_RANGE(2, 4), search.trials = 3, search.metric = rmse
  LABEL price INTO price_searched;
