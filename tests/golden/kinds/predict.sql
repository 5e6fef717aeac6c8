SELECT * FROM houses TO PREDICT price_predictions.price USING price_xgb;
SELECT * FROM houses TO PREDICT pinned.price USING price_xgb VERSION 2;
SELECT * FROM houses TO PREDICT served.price USING price_xgb VERSION champion;
SELECT * FROM houses TO PREDICT price_predictions USING price_xgb;
