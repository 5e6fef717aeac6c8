SELECT area, rooms FROM houses TO EXPLAIN price_xgb INTO price_explanation;
