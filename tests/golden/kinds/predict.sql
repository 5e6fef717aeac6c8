SELECT * FROM houses TO PREDICT price_predictions.price USING price_xgb;
