"""TO TRAIN, and the hyperparameter search it becomes when a WITH value is a set of
candidates (run as trials, then the best kept)."""

from sqlml.statements.kind import Completion, Effects, StatementKind

_TRAINS = Effects(
    queries=("select", "attributes.validation.select"),
    reads_models=("base_model",),
    writes_models=("model",),
)
_SEARCHES = Effects(
    queries=_TRAINS.queries,
    reads_models=_TRAINS.reads_models,
    writes_models=_TRAINS.writes_models,
    writes_tables=("search.trials_table",),
    replace="search.replace_table",
)

KINDS = (
    StatementKind(
        name="train",
        ir=f"{__name__}.ir:TrainStatement",
        syntax=f"{__name__}.syntax:TrainNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("TRAIN",),
        analysis=f"{__name__}.analysis:lower",
        step="train",
        handler="sqlml.statements.train.handler:train",
        effects=_TRAINS,
        completion=Completion(after={"TRAIN": "estimator", "USING": "model", "INTO": "model"}),
    ),
    StatementKind(
        name="search",
        ir=f"{__name__}.ir:SearchStatement",
        step="hyperparameter_search",
        handler="sqlml.statements.train.handler.trials:finish",
        effects=_SEARCHES,
        fans_out=True,
    ),
    StatementKind(
        name="trial",
        ir=f"{__name__}.ir:TrialStatement",
        step=None,  # made by the search's step
        handler="sqlml.statements.train.handler.trials:run_trial",
        effects=_SEARCHES,
        kept="sqlml.statements.train.handler.trials:trials_kept",
        on_cancel="sqlml.statements.train.handler.trials:discard_trials",
    ),
)
