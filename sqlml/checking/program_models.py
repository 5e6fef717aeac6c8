"""The models as a program's earlier statements leave them: those stored in the database,
and those the program trains or drops before the statement checked."""

from __future__ import annotations

from typing import Any

from sqlml import ir
from sqlml.checking.positions import name_at, placed_at
from sqlml.datasources import Datasource
from sqlml.errors import ModelError, SqlmlError, SqlmlWarning
from sqlml.grammar import ast
from sqlml.models.store import ModelStore
from sqlml.semantics.metric_names import check_evaluated, stored_task, trained_task
from sqlml.semantics.predict_calls import (
    PredictCall,
    defines_lasting,
    position,
    predict_calls,
    replaced,
    select_items,
    stand_in,
)
from sqlml.statements import kind_of
from sqlml.statements.evaluate.ir import EvaluateStatement
from sqlml.statements.predict.handler import result_column
from sqlml.statements.predict.ir import PredictStatement
from sqlml.statements.sql.handler.model_calls import ModelCalls, NotCompiled
from sqlml.statements.sql.handler.scored_here import elsewhere, notice, scores_here
from sqlml.statements.train.handler import check_base_estimator, check_repeated
from sqlml.statements.train.ir import TrainStatement


class ProgramModels:
    """What is known of each model, by its exact name, before the statement checked."""

    def __init__(self, datasource: Datasource) -> None:
        self.datasource = datasource
        self.store = ModelStore(datasource)
        catalog = self.store.catalog()
        self.written: set[str] = set()  # the models the program trains or drops so far
        self.calls = ModelCalls(datasource)  # PREDICT's models
        self.warnings: list[SqlmlError] = []  # found by check, not yet taken
        # The estimator of each model that exists (None: its metadata is unreadable).
        self.estimators = {
            name: None if isinstance(meta, ModelError) else meta["estimator"]
            for name, _, meta in catalog
        }
        self.tasks = {name: stored_task(meta) for name, _, meta in catalog}  # None: not known
        # The LABEL column of each model ("": none; absent: not known).
        self.labels = {name: meta["label"] for name, _, meta in catalog if isinstance(meta, dict)}
        # The attributes of each model (absent: not known).
        self.attributes: dict[str, Any] = {
            name: meta["attributes"]
            for name, _, meta in catalog
            if isinstance(meta, dict) and isinstance(meta.get("attributes"), dict)
        }

    def check(self, statement: ir.Statement, node: ast.Statement) -> None:
        """A :class:`~sqlml.errors.SqlmlError` if ``statement`` uses a model that neither
        exists nor is trained earlier, or uses one as it cannot be used."""
        effects = kind_of(statement).effects
        if effects.standard_sql:
            self._check_calls(node)
            return
        for model in effects.values(statement, effects.reads_models + effects.alters_models):
            with placed_at(name_at(node, model.split("."))):
                self._check_exists(model)
        for model, version in _versions(statement):
            if version is not None and model not in self.written:
                with placed_at(name_at(node, model.split("."))):
                    self.store.resolve(model, version)  # an error if it is not stored
        if isinstance(statement, TrainStatement) and statement.base_model:
            estimator = self.estimators[statement.base_model]
            if estimator is not None:
                with placed_at(getattr(node, "using", None)):
                    check_base_estimator(statement, estimator)
            if statement.base_model in self.attributes:
                check_repeated(statement, self.attributes[statement.base_model])
        if isinstance(statement, EvaluateStatement):
            check_evaluated(node, self.tasks.get(statement.model), self.labels.get(statement.model))
        if isinstance(statement, PredictStatement) and statement.version is None:
            label = self.labels.get(statement.model)  # names TO PREDICT <table>'s column
            if label is not None:
                with placed_at(getattr(node, "target", None)):
                    result_column(statement, label)

    def follow(self, statement: ir.Statement) -> None:
        """Take in the models ``statement`` trains and drops."""
        effects = kind_of(statement).effects
        trains = isinstance(statement, TrainStatement)
        self.written.update(effects.values(statement, effects.writes_models))
        self.written.update(effects.values(statement, effects.drops_models))
        for model in effects.values(statement, effects.writes_models):
            self.estimators[model] = getattr(statement, "estimator", None)
            self.attributes.pop(model, None)
            if trains and not statement.base_model:
                self.attributes[model] = statement.attributes
            self.tasks[model] = (
                trained_task(
                    statement.task, statement.label, statement.attributes, statement.family
                )
                if trains
                else None
            )
            self.labels[model] = statement.label if trains else None
        for model in effects.values(statement, effects.drops_models):
            self.estimators.pop(model, None)
            self.attributes.pop(model, None)

    def _check_calls(self, node: ast.Statement) -> None:
        """Each ``PREDICT`` call of standard SQL names a model that exists or is trained
        earlier, and one stored (not trained by the program) can be used as the statement
        uses it (compiled into SQL where the database cannot call sqlml); the error at the
        call."""
        dialect = self.datasource.dialect
        lasting = defines_lasting(node.text, dialect)
        calls = predict_calls(node.text, dialect, node.pos)
        items = select_items(node.text, dialect, calls)
        for call in calls:
            where = position(node.text, call.start, node.pos)
            with placed_at(ast.Position(*where, 0)):
                self._check_exists(call.model)
                if call.model in self.written:
                    continue
                try:
                    self.calls.check(call, lasting)
                except NotCompiled as error:
                    if not scores_here(items.get(call), self.datasource):
                        raise elsewhere(error, self.datasource, lasting) from None
                    message, hint = notice(error.message)
                    self.warnings.append(
                        SqlmlWarning(message, line=where[0], column=where[1], hint=hint)
                    )

    def with_models(self, text: str, dialect: str) -> str:
        """Standard SQL's ``text`` as the database is to describe and replay it: each
        ``PREDICT`` call replaced by its model's SQL where the model is stored, compiles and
        the program has not trained it again (a feature column out of scope is then the
        database's error), else by ``NULL``."""

        def sql(call: PredictCall) -> str:
            if call.model in self.estimators and call.model not in self.written:
                try:
                    return f"({self.calls.rendered(call)})"
                except SqlmlError:  # reported at the call by check, or scored by sqlml
                    pass
            return stand_in(text, call)

        return replaced(text, predict_calls(text, dialect, ast.Position(1, 1, 0)), sql)

    def _check_exists(self, name: str) -> None:
        if name not in self.estimators:
            raise ModelError(
                f"model {name} does not exist in {self.datasource.url} and no earlier "
                "statement trains it",
                hint=f"train it first with ... TO TRAIN <estimator> ... INTO {name}",
            )


def _versions(statement: ir.Statement) -> list[tuple[str, int | str | None]]:
    """The models ``statement`` names with the version it names of each (None: the newest)."""
    named = [(getattr(statement, "model", None), getattr(statement, "version", None))]
    if isinstance(statement, TrainStatement):
        named = [(statement.base_model, statement.base_version)]
    return [(model, version) for model, version in named if model is not None]
