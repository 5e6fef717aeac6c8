"""Workflow search, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('search')

s1_train_price_searched = steps.hyperparameter_search(
    workflow,
    ir.SearchStatement(
        id='s1-train-price-searched',
        text="SELECT area, rooms, price FROM houses TO TRAIN xgboost.gbtree\n  WITH objective = 'reg:squarederror', eta = CHOICE(0.1, 0.3),\n  max_depth = INT_RANGE(2, 4), search.trials = 3, search.metric = rmse\n  LABEL price INTO price_searched",
        line=2,
        column=1,
        select='SELECT area, rooms, price FROM houses',
        estimator='xgboost.gbtree',
        family='xgboost',
        task='auto',
        attributes={'alpha': 0.0, 'seed': 0, 'train.num_boost_round': 10, 'lambda': 1.0, 'min_child_weight': 1.0, 'gamma': 0.0, 'subsample': 1.0, 'colsample_bytree': 1.0, 'tree_method': 'hist', 'train.external_memory': False, 'validation.split': 0.2, 'validation.seed': 0, 'objective': 'reg:squarederror', 'booster': 'gbtree'},
        features=[],
        label='price',
        model='price_searched',
        base_model=None,
        space={'eta': {'kind': 'choice', 'type': 'float', 'values': [0.1, 0.3]}, 'max_depth': {'kind': 'int_range', 'type': 'int', 'low': 2, 'high': 4}},
        search={'trials': 3, 'algorithm': 'random', 'seed': 0, 'metric': 'rmse', 'goal': 'minimize', 'parallel': 3, 'trials_table': ['price_searched_trials'], 'replace_table': False},
    )
)

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
