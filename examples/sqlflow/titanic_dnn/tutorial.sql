-- doc/tutorial/apsara2019/titanic_dnn/README.md, About The Titanic Dataset
describe titanic.train;

-- doc/tutorial/apsara2019/titanic_dnn/README.md, About The Titanic Dataset
select *
from titanic.train
limit 1;

-- doc/tutorial/apsara2019/titanic_dnn/README.md, Train a DNN Model Using SQLFlow
SELECT *
FROM titanic.train
TO TRAIN DNNClassifier
WITH
  model.n_classes = 2,
  model.hidden_units = [10, 40, 10],
  train.epoch = 200,
  train.batch_size = 64
COLUMN pclass_1, pclass_2, pclass_3, sex_female, sex_male, embarked_c, embarked_q, embarked_s, title_master, title_misc, title_miss, title_mr, title_mrs, nosibsp, noparch, nullcabin, cabinalpha, family, isalone, ismother, age, realfare
LABEL survived
INTO sqlflow_models.my_dnn_model;

-- doc/tutorial/apsara2019/titanic_dnn/README.md, Predict Passenger Survival
SELECT *
FROM titanic.test
TO PREDICT titanic.predict.survived
USING sqlflow_models.my_dnn_model;

-- doc/tutorial/apsara2019/titanic_dnn/README.md, Predict Passenger Survival
SELECT *
FROM titanic.test
LIMIT 5;

-- doc/tutorial/apsara2019/titanic_dnn/README.md, Predict Passenger Survival
SELECT *
FROM titanic.predict
LIMIT 5;
