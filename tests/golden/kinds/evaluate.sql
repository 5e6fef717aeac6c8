SELECT * FROM houses TO EVALUATE price_xgb WITH validation.metrics = 'rmse,mae'
  LABEL price INTO price_metrics;
