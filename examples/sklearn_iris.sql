-- Iris flowers with scikit-learn's estimators (the sklearn extra: pip install 'sqlml[sklearn]'):
-- a random forest learns the species, k-means finds them without being told, and an
-- isolation forest that learned the setosas flags the other species as outliers.
-- Run with: sqlml run examples/sklearn_iris.sql   (paths below resolve next to this file)

-- Every fifth flower is held out for testing.
CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');
CREATE OR REPLACE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;
CREATE OR REPLACE TABLE iris_test AS SELECT * FROM iris WHERE id % 5 = 0;

-- Supervised: a random forest, measured and explained on the held-out flowers.
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN sklearn.ensemble.RandomForestClassifier
WITH model.n_estimators = 50, model.max_depth = 5
LABEL class
INTO iris_forest;

SELECT * FROM iris_test TO PREDICT iris_forest_pred.class USING iris_forest;
SELECT * FROM iris_test TO EVALUATE iris_forest LABEL class INTO iris_forest_metrics;
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris_test
TO EXPLAIN iris_forest INTO iris_forest_explanation;

-- Clustering, without LABEL: TO PREDICT writes each flower's cluster id (0, 1 or 2).
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris
TO TRAIN sklearn.cluster.KMeans
WITH model.n_clusters = 3, model.n_init = 10
INTO iris_kmeans;

SELECT * FROM iris TO PREDICT iris_clusters.cluster USING iris_kmeans;

-- Which species fall in which cluster.
SELECT cluster, class, count(*) AS flowers
FROM iris_clusters GROUP BY cluster, class ORDER BY cluster, flowers DESC;

-- Outlier detection, without LABEL: TO PREDICT writes 1 (like the setosas) or -1 (an outlier).
SELECT sepal_length, sepal_width, petal_length, petal_width FROM iris_train
WHERE class = 'setosa'
TO TRAIN sklearn.ensemble.IsolationForest
WITH model.contamination = 0.05
INTO setosa_outliers;

SELECT * FROM iris_test TO PREDICT iris_outliers.flag USING setosa_outliers;

SELECT class, flag, count(*) AS flowers FROM iris_outliers GROUP BY class, flag ORDER BY class, flag;
