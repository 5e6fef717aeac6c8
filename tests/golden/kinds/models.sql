-- The model statements.
SHOW TRAIN price_xgb;
SHOW MODELS;
DESCRIBE MODEL price_xgb;
DROP MODEL IF EXISTS price_xgb;
