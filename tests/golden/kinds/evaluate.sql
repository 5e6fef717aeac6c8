SELECT * FROM houses TO EVALUATE price_xgb WITH validation.metrics = 'rmse,mae'
  LABEL price INTO price_metrics;
SELECT * FROM houses TO EVALUATE price_xgb VERSION challenger LABEL price INTO challenger_metrics;
