-- SQLFlow's clustering tutorial, its statements in order as the doc writes them (only the
-- %%sqlflow lines dropped). The data: data.py (synthetic, see its docstring).

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "The Active Power Consumption DataSet"
describe activepower.train;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "The Active Power Consumption DataSet"
select * 
from activepower.train 
limit 1;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "Train a Clustering model using SQLFlow"
SELECT * FROM activepower.train
TO TRAIN sqlflow_models.DeepEmbeddingClusterModel
WITH
  model.n_clusters=3,
  model.pretrain_epochs=10,
  model.train_max_iters=800,
  model.train_lr=0.01,
  model.pretrain_lr=1,
  train.batch_size=256
COLUMN m1,m2,m3,m4,m5,m6,m7,m8,m9,m10,m11,m12,m13,m14,m15,m16,m17,m18,m19,m20,m21,m22,m23,m24,m25,m26,m27,m28,m29,m30,m31,m32,m33,m34,m35,m36,m37,m38,m39,m40,m41,m42,m43,m44,m45,m46,m47,m48
INTO sqlflow_models.my_customized_model;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "Predict the patterns of the data"
SELECT * 
FROM activepower.train
TO PREDICT activepower.predict.class
USING sqlflow_models.my_customized_model;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "Predict the patterns of the data"
SELECT * 
FROM activepower.predict
limit 5;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "Analyze the clustering results"
select class, count(*) as count 
from activepower.predict 
group by class;

-- doc/tutorial/apsara2019/activepower_clustering/README.md, "Analyze the clustering results"
select 
class
,avg(m1) as clock0
,avg(m8) as clock4
,avg(m16) as clock8
,avg(m24) as clock12
,avg(m32) as clock16
,avg(m40) as clock20
,avg(m46) as clock23
from activepower.predict
group by class;
