"""Workflow train_distributed, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('train_distributed')

s1_train_price_xgb = workflow.add(steps.train(
    ir.TrainStatement(
        id='s1-train-price-xgb',
        text="SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree\n  WITH objective = 'reg:squarederror', train.workers = 2 LABEL price INTO price_xgb",
        line=2,
        column=1,
        select='SELECT area, rooms, price FROM houses',
        estimator='xgboost.gbtree',
        family='xgboost',
        task='auto',
        attributes={'eta': 0.3, 'alpha': 0.0, 'seed': 0, 'train.num_boost_round': 10, 'lambda': 1.0, 'max_depth': 6, 'min_child_weight': 1.0, 'gamma': 0.0, 'subsample': 1.0, 'colsample_bytree': 1.0, 'tree_method': 'hist', 'train.external_memory': False, 'validation.split': 0.2, 'validation.seed': 0, 'objective': 'reg:squarederror', 'train.workers': 2, 'booster': 'gbtree'},
        features=[],
        label='price',
        model='price_xgb',
        base_model=None,
    )
))
s2_train_price_dnn = workflow.add(steps.train(
    ir.TrainStatement(
        id='s2-train-price-dnn',
        text='SELECT area, rooms, price FROM houses TO TRAIN DNNRegressor\n  WITH train.workers = 2, train.ps = 1 LABEL price INTO price_dnn',
        line=4,
        column=1,
        select='SELECT area, rooms, price FROM houses',
        estimator='DNNRegressor',
        family='keras',
        task='regressor',
        attributes={'model.hidden_units': [64, 32], 'model.activation': 'relu', 'model.dropout': 0.0, 'train.epoch': 10, 'train.batch_size': 32, 'train.seed': 0, 'optimizer.learning_rate': 0.01, 'train.external_memory': False, 'validation.split': 0.2, 'validation.seed': 0, 'architecture': 'dnn'},
        features=[],
        label='price',
        model='price_dnn',
        base_model=None,
    )
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
