"""How the ``PREDICT`` calls of standard SQL run on a datasource.

Where the database runs in sqlml's process and calls its functions (``calls_python``), a call
becomes a function of the model (:mod:`sqlml.models.in_query`): always on DuckDB, whose
functions take a vector of rows, and on SQLite, which calls them a row at a time, only for a
model that does not compile into SQL. Elsewhere, and in what the database keeps for later (a
view, a macro: sqlml's process may have ended when it runs), the call becomes the model
compiled into SQL (:meth:`~sqlml.models.Family.to_sql`), which the database runs itself.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from sqlml.datasources import Datasource
from sqlml.datasources.base import QueryFunction
from sqlml.errors import ModelError

if TYPE_CHECKING:
    from sqlglot import exp

    from sqlml.models.applied import Model
    from sqlml.models.interface import CompiledModel
    from sqlml.models.store import StoredModel
    from sqlml.runtime.context import Context
    from sqlml.semantics.predict_calls import PredictCall

_Key = tuple[str, "int | str | None"]  # a model's name and version or alias (None: the newest)


class _Kept:
    """The last few values put, the least recently used dropped (steps running at once in
    threads share it)."""

    def __init__(self, most: int) -> None:
        self._values: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.most = most

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
            return self._values.get(key)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.most:
                self._values.popitem(last=False)


# Compiled models and their SQL, kept in the process by the stored model's digest: a REPL, a
# notebook or a program calling a model again does not compile it again (seconds for 100
# trees). Rendered SQL is keyed by the digest, dialect and class.
_COMPILED = _Kept(8)
_RENDERED = _Kept(16)


def _digest(stored: StoredModel) -> str:
    """What a compiled model depends on: the model's bytes and metadata."""
    digest = hashlib.sha256(stored.data)
    digest.update(json.dumps(stored.metadata, sort_keys=True, default=str).encode())
    return digest.hexdigest()


class NotCompiled(ModelError):
    """A stored model's family does not compile it into SQL (the message says why)."""


class ModelCalls:
    """The calls of the statements run (or checked) on ``datasource``: each model loaded
    and compiled once."""

    def __init__(self, datasource: Datasource) -> None:
        from sqlml.models.store import ModelStore

        self.datasource = datasource
        self.store = ModelStore(datasource)
        self._compiled: dict[_Key, CompiledModel] = {}
        self._models: dict[_Key, Model] = {}
        self.functions: list[QueryFunction] = []  # those :meth:`sql` made, to register
        self._names: dict[tuple[str, int | None, str | None, str | None], str] = {}
        self._digests: dict[_Key, str] = {}  # of the models compiled, as :func:`_digest`
        self._classes: dict[_Key, bool] = {}  # whether a model compiled predicts classes
        self.compiled_sql = False  # whether :meth:`sql` gave a model's compiled SQL

    def sql(self, call: PredictCall, lasting: bool, context: Context) -> str:
        """The call as SQL of the datasource's dialect; a function of ``context``'s statement
        added to :attr:`functions` where one scores it. A :class:`ModelError` if the model is
        missing, cannot be compiled where it must be, gives no such probability, or scores a
        SELECT's rows together where a function would score a few at a time."""
        if self._in_process(call, lasting):
            from sqlml.models.in_query import check_row_wise, read_columns

            check_row_wise(call.model, self._model(call).stored.metadata)
            key = (call.model, call.version, call.label, call.feature)
            if key not in self._names:  # one function a model and output: GROUP BY matches
                function, _ = self.function(call, context)
                self._names[key] = function.name
                self.functions.append(function)
            columns = read_columns(self._model(call))
            return f"{self._names[key]}({', '.join(self.datasource.quote([c]) for c in columns)})"
        self.compiled_sql = True
        return f"({self.rendered(call, lasting)})"

    def rendered(self, call: PredictCall, lasting: bool = False) -> str:
        """The call's compiled SQL in the datasource's dialect, rendered once a process; a
        probability or a value as a double, as TO PREDICT writes it (MySQL computes a
        forest's averages of literals as exact decimals)."""
        from sqlglot import exp

        expression = self.compiled(call, lasting)
        dialect, key = self.datasource.dialect, (call.model, call.version)
        rendered = (self._digests[key], dialect, call.label)
        sql = _RENDERED.get(rendered)
        if sql is None:
            sql = expression.sql(dialect=dialect)
            if call.label is not None or not self._classes[key]:
                sql = f"CAST({sql} AS {exp.DataType.build('double').sql(dialect=dialect)})"
            _RENDERED.put(rendered, sql)
        return sql

    def function(self, call: PredictCall, context: Context) -> tuple[QueryFunction, list[str]]:
        """A function of sqlml's that scores ``call`` (in ``context``'s statement), and the
        columns it takes."""
        from sqlml.models.in_query import query_function, read_columns

        model = self._model(call)
        name = f"sqlml_predict_{uuid.uuid4().hex[:12]}"
        function = query_function(name, model, context, call.label, call.feature)
        return function, read_columns(model)

    def check(self, call: PredictCall, lasting: bool) -> None:
        """A :class:`ModelError` where :meth:`sql` would raise one (what the model's
        metadata tells first: a class or feature it lacks)."""
        from sqlml.models import family
        from sqlml.models.in_query import check_row_wise, class_index, contribution_index
        from sqlml.runtime.labels import LabelEncoding

        stored = self.store.load(call.model, call.version)  # its library left unloaded
        in_process = self._in_process(call, lasting)
        if in_process:
            check_row_wise(call.model, stored.metadata)
        labels = LabelEncoding.from_dict(stored.metadata["labels"])
        if call.feature is not None:
            model_family = family(stored.metadata["family"])
            contribution_index(model_family, labels, stored, call.feature, call.label)
        elif call.label is not None and in_process:
            class_index(labels, call.model, call.label)
        if not in_process:
            self.compiled(call, lasting)

    def compiled(self, call: PredictCall, lasting: bool = False) -> exp.Expression:
        """``PREDICT(m)`` as ``m``'s prediction, ``PREDICT_PROBA(m, 'class')`` as the
        class's probability, compiled into SQL, reading the features by name (as
        :meth:`rendered` writes it, without its cast to a double)."""
        from sqlml.models import family

        if call.feature is not None:
            raise NotCompiled(
                f"PREDICT_CONTRIBUTION of model {call.model} is computed by its library: it "
                "is not compiled into SQL",
                hint="call it in a query, not a view (where the database cannot call sqlml, as "
                "an item of the outermost SELECT list)",
            )
        key = (call.model, call.version)
        if key not in self._compiled:
            stored = self.store.load(call.model, call.version)
            digest = _digest(stored)
            try:
                self._compiled[key] = _COMPILED.get(digest) or family(
                    stored.metadata["family"]
                ).to_sql(stored)
            except ModelError as error:
                if lasting and self.datasource.calls_python:
                    raise NotCompiled(
                        f"{error.message}; a view (or macro) runs after sqlml's process has "
                        "ended, so the models it calls must compile into SQL",
                        hint="score the rows into a table with TO PREDICT, or call the model "
                        "in a query instead of a view",
                    ) from None
                raise NotCompiled(error.message, hint=error.hint) from None
            _COMPILED.put(digest, self._compiled[key])
            self._digests[key] = digest
            self._classes[key] = stored.metadata["labels"]["task"] == "classifier"
        model = self._compiled[key]
        if call.label is None:
            return model.value
        if call.label not in model.scores:
            raise ModelError(
                f"model {call.model} gives no probability of the class {call.label!r}",
                hint=f"its classes' probabilities: {', '.join(map(repr, model.scores))}"
                if model.scores
                else "its objective gives classes only: use PREDICT",
            )
        return model.scores[call.label]

    def _in_process(self, call: PredictCall, lasting: bool) -> bool:
        """Whether a function in this process scores ``call`` (see the module)."""
        how = self.datasource.calls_python
        if how is None or lasting:
            return False
        if how == "batches":
            return True
        try:
            self.compiled(call)
        except ModelError:  # not compiled; or missing, which the function says too
            return True
        return False

    def _model(self, call: PredictCall) -> Model:
        from sqlml.models.applied import load_model

        key = (call.model, call.version)
        if key not in self._models:
            self._models[key] = load_model(call.model, self.datasource, call.version)
        return self._models[key]
