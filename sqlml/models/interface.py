"""The interface of a model family, and of the library code it imports when it is used."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from sqlml import imports
from sqlml.errors import KubernetesError, ModelError
from sqlml.models.estimator import Estimator

if TYPE_CHECKING:
    import numpy as np
    from sqlglot import exp

    from sqlml.datasources import Columns
    from sqlml.models.applied import Model
    from sqlml.models.store import StoredModel
    from sqlml.runtime.context import Context
    from sqlml.runtime.features_apply import FeatureArrays
    from sqlml.runtime.labels import LabelEncoding
    from sqlml.semantics.attributes import Attr
    from sqlml.statements.train.syntax import TrainNode
    from sqlml.steps.kubeflow import JobKind, Replica
    from sqlml.workflow.core import Step


class Trainer(Protocol):
    """What trains and scores a family's models (a module or an object).

    ``train`` returns the model's bytes and what its metadata records besides (``params``,
    ``metrics``, ``column_types``); ``base`` is a stored model of the same estimator whose
    training continues. ``scorer`` loads a stored model once; its function returns class
    probabilities (rows x classes) for classifiers, values for regressors (rows x n for a
    LABEL of n values a row, :mod:`sqlml.runtime.label_lists`).

    ``context`` is the running statement's (:class:`~sqlml.runtime.context.Context`): its
    long loops check ``context.token`` (between rounds, epochs or batches) and report to
    ``context.reporter`` (a "training" stage; scoring advances the current stage by rows).

    A clustering family's trainer may offer ``points(data, metadata, features)``: the rows in
    the space its model measures distances in (TO EVALUATE's silhouette), when it scales or
    imputes them. A trainer may also offer ``searches(attributes) -> bool``: when it says so
    for a training anew on rows in memory, ``train`` gets the held-out validation rows too,
    as the keyword ``validation``, to choose among candidate models (the Keras family's
    AutoClassifier).
    """

    def train(
        self,
        context: Context,
        features: FeatureArrays,
        y: np.ndarray,
        labels: LabelEncoding,
        attributes: dict[str, Any],
        base: StoredModel | None = None,
        **ranking: np.ndarray,
    ) -> tuple[bytes, dict[str, Any]]:
        """Fit the rows in memory (``ranking``: ``groups``, each row's query, for rankers)."""

    def scorer(
        self, context: Context, data: bytes, metadata: dict[str, Any]
    ) -> Callable[[FeatureArrays, int], np.ndarray]:
        """The stored model, loaded once, as a function of features and a batch size."""


class RowsTrainer(Trainer, Protocol):
    """The trainer of a family that makes TO PREDICT's rows itself
    (:attr:`Family.predicts_rows`)."""

    def predicted_rows(
        self,
        context: Context,
        model: Model,
        batches: Iterator[Columns],
        result: str,
        attributes: dict[str, Any],
    ) -> Iterator[Columns]:
        """The batches TO PREDICT writes, into ``result`` (and columns named after it), for
        the SELECT's ``batches`` (checked, each column named as the statement spells it),
        TO PREDICT's WITH ``attributes`` given; advances ``context.reporter`` by the rows."""


@dataclass(frozen=True)
class Imported:
    """A model trained elsewhere, read from its file by its family (TO IMPORT): the bytes
    to store (in the family's stored format), its estimator, ``params`` (as a trained
    model's), task (``classifier`` or ``regressor``), classes (a classifier's, as the model
    holds them, else 0 to n-1) and inputs: how many values it reads a row and, if the file
    names them, their names."""

    data: bytes
    estimator: str
    params: dict[str, Any]
    task: str
    classes: list[Any]
    inputs: int
    names: list[str] | None


class ImportingTrainer(Trainer, Protocol):
    """The trainer of a family whose models TO IMPORT reads from files
    (:attr:`Family.import_formats`)."""

    def import_model(self, data: bytes) -> Imported:
        """The model a file's bytes hold, checked before its library reads them; a
        :class:`ModelError` saying why it is refused (a format that can run code, a
        malformed or damaged file, a model sqlml cannot score)."""


class StreamingTrainer(Trainer, Protocol):
    """The trainer of a family that trains on streamed batches (:attr:`Family.streams`)."""

    def train_batches(
        self,
        context: Context,
        batches: Callable[[], Iterator[tuple[FeatureArrays, np.ndarray]]],
        sample: FeatureArrays,
        sample_y: np.ndarray,
        labels: LabelEncoding,
        attributes: dict[str, Any],
        base: StoredModel | None = None,
    ) -> tuple[bytes, dict[str, Any]]:
        """Fit like ``train``, on rows that ``batches()`` yields pass after pass
        (``train.external_memory``); ``sample``, labelled ``sample_y``, is the first rows."""


class ExtraScoringTrainer(Trainer, Protocol):
    """The trainer of a family with extra outputs of its own (:attr:`Family.own_extra_outputs`)."""

    def extra_scorer(
        self, context: Context, data: bytes, metadata: dict[str, Any]
    ) -> Callable[[FeatureArrays, int], tuple[np.ndarray, dict[str, np.ndarray]]]:
        """Like ``scorer``: the stored model, loaded once, as a function of features and a
        batch size that returns the scores and, by name, each row's value of every extra
        output of the family's own that the model offers (:meth:`Family.extra_outputs`)."""


class TreeTrainer(Trainer, Protocol):
    """The trainer of a family that offers TreeExplainer."""

    def contributions(
        self, context: Context, data: bytes, features: FeatureArrays, metadata: dict[str, Any]
    ) -> np.ndarray:
        """SHAP contributions (rows x [classes x] features), without the bias term; checks
        ``context.token`` between batches of rows and advances ``context.reporter``'s current
        stage by them."""


@dataclass(frozen=True)
class Explainer:
    """An explainer of a family's own, which TO EXPLAIN ... USING ``name`` picks: the method
    ``method(data, features, metadata)`` of the family's trainer returns each feature's
    importance by measure (name -> one value a feature); the first ranks the features and
    is plotted, the others are more columns of the table."""

    name: str
    method: str
    measure: str  # what the first importance measures (the plot's axis)
    title: str  # the plot's title, after the model's name and a colon


@dataclass(frozen=True)
class CompiledModel:
    """A stored model as portable SQL: sqlglot expressions over its feature columns, which
    ``sqlml export --format sql`` renders in a dialect."""

    columns: list[str]  # the columns it reads (its feature columns', by name)
    value: exp.Expression  # what TO PREDICT writes: the class as the label's value, or a value
    scores: dict[str, exp.Expression]  # a classifier's probability of each class (its text)
    notes: list[str]  # caveats, written in the file's header


PROBABILITIES = "probabilities"  # the extra output of every classifier: its class probabilities


class Family(ABC):
    """A model family: its estimators, its stored format and what it does with models.

    Subclasses set the class attributes and implement the abstract methods; their module
    stays cheap to import (the library goes in the module :meth:`trainer` imports).
    """

    name: ClassVar[str]  # recorded in each model's metadata
    trainer_module: ClassVar[str]  # the module that trains and scores (see :meth:`trainer`)
    format: ClassVar[str]  # of the stored bytes; a model stored in another is not read
    extensions: ClassVar[tuple[str, ...]]  # of export files, the first the usual one
    # TO EXPLAIN's explainers it offers, the first the default: sqlml's (TreeExplainer needs
    # a TreeTrainer, ShapleyExplainer (no label needed) and PermutationExplainer (needs the
    # label) work with any) and those of :attr:`own_explainers`.
    explainers: ClassVar[tuple[str, ...]] = ("ShapleyExplainer", "PermutationExplainer")
    own_explainers: ClassVar[tuple[Explainer, ...]] = ()
    # The top-level modules of its library, whose dotted names are never a user's model builder.
    libraries: ClassVar[tuple[str, ...]] = ()
    # What its users' model builders are, for hints (when it takes them, :meth:`builder`).
    builders: ClassVar[str | None] = None
    parameter_servers: ClassVar[bool] = False  # whether train.ps applies to its job
    # Whether its job's head pod is one of train.workers (XGBoost's Master: rank 0).
    job_head_is_worker: ClassVar[bool] = False
    # Whether its trainer trains on streamed batches (a StreamingTrainer): without it,
    # TO TRAIN refuses train.external_memory.
    streams: ClassVar[bool] = False
    # Why its scorer needs the rows of a SELECT together (a row's prediction depends on the
    # others), or None: each row is scored alone. A query's function of sqlml's, called on a
    # few rows at a time (DuckDB, SQLite), cannot score such a model: PREDICT there is an error.
    scores_together: ClassVar[str | None] = None
    # Whether its trainer (a RowsTrainer) makes TO PREDICT's rows from the SELECT's, which
    # may be more or fewer (a forecast's steps after each series), and takes
    # predict.confidence_level; else TO PREDICT writes a prediction beside each row.
    predicts_rows: ClassVar[bool] = False
    # The module whose ``train(statement, context)`` trains a model in train.workers
    # processes (see :meth:`distributed`): the trained model (sqlml.runtime.training_data's
    # Trained) for TO TRAIN's handler to store, or the Outcome of a worker whose model another
    # process stores. None: its TO TRAIN runs in one process locally.
    distributed_module: ClassVar[str | None] = None
    # The formats of model files TO IMPORT reads as its models (its trainer an
    # ImportingTrainer), each with the file extensions that tell it.
    import_formats: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    # TO PREDICT's extra outputs of its own (predict.extra_outputs), each a column of that
    # name: its name -> what the column holds. Its trainer is an ExtraScoringTrainer.
    own_extra_outputs: ClassVar[Mapping[str, str]] = {}
    # Packages its library's modules import at their own import but it never uses, hidden from
    # them while :meth:`trainer` and :meth:`distributed` load (module -> packages: see
    # sqlml.imports.load), so that a statement of it does not pay for their import.
    unused_imports: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    @abstractmethod
    def estimators(self) -> Iterable[Estimator]:
        """The estimators it declares."""

    @property
    def title(self) -> str:
        """Its name in messages (``XGBoost``): :attr:`name` unless a subclass sets one."""
        return self.name

    def trainer(self) -> Trainer:
        """What trains and scores its models: :attr:`trainer_module`, imported on first use
        (a plug-in, by name: the layers below never import a library's code)."""
        return cast(Trainer, imports.load(self.trainer_module, self.unused_imports))

    def distributed(self) -> Any:
        """What trains its models in several processes: :attr:`distributed_module`, imported
        on first use (a plug-in, by name, as :meth:`trainer`); None if it has none."""
        if self.distributed_module is None:
            return None
        return imports.load(self.distributed_module, self.unused_imports)

    @abstractmethod
    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """``stored``, checked as for scoring, as a function that writes it to a file in the
        library's own format (chosen by the file's extension, one of :attr:`extensions`)."""

    def to_sql(self, stored: StoredModel) -> CompiledModel:
        """``stored`` (checked as for scoring) compiled into portable SQL; a
        :class:`ModelError` saying why when it cannot be."""
        raise ModelError(
            f"model {stored.name} ({stored.metadata['estimator']}, {self.title}) cannot be "
            "compiled into SQL",
            hint="export it in its library's format instead (sqlml export MODEL FILE)",
        )

    def import_format_of(self, data: bytes) -> str | None:
        """The format, among :attr:`import_formats`, that a model file's first bytes tell
        (TO IMPORT of a file whose extension tells none), or None."""
        return None

    def to_onnx(self, stored: StoredModel) -> bytes:
        """``stored`` (checked as for scoring) converted to an ONNX model
        (``sqlml export --format onnx``); a family that converts overrides it."""
        raise ModelError(
            f"model {stored.name} ({stored.metadata['estimator']}, {self.title}) cannot be "
            "converted to ONNX",
            hint="export it in its library's format instead (sqlml export MODEL FILE)",
        )

    def converts_to_onnx(self) -> bool:
        """Whether its models convert to ONNX (it overrides :meth:`to_onnx`)."""
        return type(self).to_onnx is not Family.to_onnx

    def builder(self, name: str) -> Estimator | None:
        """The estimator of a user's model builder, the function that ``name`` (dotted)
        imports, when the family takes builders; else None."""
        return None

    def builder_attributes(self) -> Mapping[str, Attr] | None:
        """The attributes its users' model builders take (completion), if it takes builders."""
        return None

    def objective_task(self, objective: object) -> str | None:
        """The task its learning objective (the ``objective`` attribute) learns:
        ``classifier``, ``regressor`` or ``ranker``; None if the objective tells none."""
        return None

    def ranks(self, attributes: Mapping[str, Any]) -> bool:
        """Whether a training with these (checked) attributes learns to rank: its rows are
        read with their queries' ids (:meth:`Trainer.train`'s ``groups``), it is measured
        as a ranker, and it cannot stream."""
        return False

    def extra_outputs(self, metadata: Mapping[str, Any]) -> dict[str, str]:
        """The extra outputs (``predict.extra_outputs``) a stored model of the family offers,
        given its ``metadata``: name -> what its columns hold. A classifier's class
        probabilities (:data:`PROBABILITIES`), and every one of :attr:`own_extra_outputs`
        unless a subclass says which of them a model offers."""
        offered = {}
        if metadata["labels"]["task"] == "classifier":
            offered[PROBABILITIES] = (
                "a column per class, <result>_<class> (or <result>_prob_<i>), holding its "
                "probability"
            )
        return {**offered, **self.own_extra_outputs}

    def check_training(
        self, statement: TrainNode, estimator: Estimator, attributes: dict[str, Any]
    ) -> None:
        """Check a TO TRAIN of ``estimator``, one of its own, beyond its attributes' schemas,
        once ``attributes`` are checked: an error (``sqlml.semantics.lowering.error``) at
        what is wrong, warnings (``sqlml.models.estimator.warn``)."""
        return None

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """What is wrong with a stored model's metadata for this family, in a few words."""
        return None

    def check_data(self, data: bytes, metadata: dict[str, Any], most_features: int) -> str | None:
        """What is wrong with a stored model's bytes, in a few words, found before its
        library reads them (no library needed); ``most_features``: the most columns its
        feature columns make. The model store asks it of every model it loads."""
        return None

    def job_kind(self, kubeflow: ModuleType) -> JobKind | None:
        """The kind of Kubeflow job its models train in when it is one of its own, made with
        ``kubeflow`` (:mod:`sqlml.steps.kubeflow`, given by its callers): the step zoo
        offers it as ``sqlml.steps.<its zoo name>.train`` and the Argo backend watches,
        logs and stops its jobs. None for none, or one of Kubeflow's own (a TFJob)."""
        return None

    def has_training_job(self) -> bool:
        """Whether its models train in a Kubeflow job on Kubernetes (it overrides
        :meth:`training_job`); if not, ``train.distributed`` is refused and ``train.workers``
        and ``train.ps`` are not applied."""
        return type(self).training_job is not Family.training_job

    def training_job(
        self,
        kubeflow: ModuleType,
        name: str,
        replica: Callable[[int], Replica],
        workers: int,
        ps: int | None,
        **options: Any,
    ) -> Step:
        """The Kubeflow job that trains a model on Kubernetes, built with the job builders of
        ``kubeflow`` (:mod:`sqlml.steps.kubeflow`, given by the Argo codegen): a head pod
        and ``workers`` worker pods (and ``ps`` parameter servers) made by
        ``replica(count)``; ``options`` go to the builder (namespace, run policy, after)."""
        raise KubernetesError(
            f"{self.name} models train in-process only, not in a Kubeflow job",
            hint="leave out train.distributed, train.workers and train.ps",
        )


def onnx_converted(name: str, converter: str, convert: Callable[[], Any], native: str) -> bytes:
    """The bytes of the ONNX model ``convert()`` makes of model ``name``; a
    :class:`ModelError` naming the ``converter`` library if it cannot, whose hint is to
    export it in the family's ``native`` format (``XGBoost's format``, ``FILE.json``)."""
    try:
        return convert().SerializeToString()
    except (RuntimeError, ValueError, NotImplementedError, TypeError) as error:
        raise ModelError(
            f"{converter} cannot convert model {name} ({type(error).__name__}: {error})",
            hint=f"export it in {native} instead",
        ) from None
