"""The attributes every estimator takes, whatever its family, and the limits they share."""

from __future__ import annotations

from sqlml.semantics.attributes import Attr, not_applied, pod_resources

# A prediction batch holds rows x classes probabilities.
MAX_CLASSES = 10_000

# Data larger than memory.
EXTERNAL_MEMORY = Attr(
    "train.external_memory",
    "bool",
    False,
    "stream the rows in batches instead of reading them all into memory (XGBoost: external "
    "memory; Keras: tf.data): the SELECT is read once, its batches kept in a temporary folder "
    "for the later passes and epochs (XGBoost's: about 4 bytes a feature a row); feature columns "
    "(and Keras's normalisation) are derived from 100,000 rows, the classes from SELECT DISTINCT "
    "label; validation.split holds out rows of each batch, not stratified; not for rankers",
    aliases=("train.disk_cache",),  # SQLFlow's, for XGBoost
)

# How the rows that measure the trained model are chosen.
VALIDATION = (
    Attr(
        "validation.select",
        "string",
        None,
        "a SELECT whose rows validate the model (instead of held-out training rows)",
    ),
    Attr(
        "validation.split",
        "float",
        0.2,
        "share of the training rows held out for validation without validation.select "
        "(per class for classifiers); 0: no validation",
        minimum=0,
        maximum=0.9,
    ),
    Attr("validation.seed", "int", 0, "seed of the held-out rows' draw", minimum=0),
    Attr(
        "validation.metrics",
        "string",
        None,
        "comma-separated metrics to compute on the validation rows too, besides those of the "
        "task, under the names written: sqlml's (as TO EVALUATE's) or SQLFlow's scikit-learn "
        "and Keras names (accuracy_score, CategoricalAccuracy, MeanSquaredError ...)",
    ),
)

# How a TO TRAIN runs on Kubernetes (sqlml compile --target argo).
DISTRIBUTED = (
    Attr(
        "train.distributed",
        "bool",
        None,
        "on Kubernetes (compile --target argo), train in a Kubeflow job: an XGBoostJob "
        "(XGBoost); unset: when train.workers is given. Local runs train in-process, but "
        "XGBoost's with train.workers above 1. The other families (Keras...) train in one "
        "process: true is an error, train.workers and train.ps are not applied",
    ),
    Attr(
        "train.workers",
        "int",
        None,
        "XGBoost: the processes that train the model together, each on its part of the "
        "rows (XGBoost's collective): locally, that many processes; on Kubernetes, the "
        "XGBoostJob's master and train.workers - 1 workers (1: no job, the step trains; 2 "
        "on Kubernetes when unset). Other families train in one process: not applied",
        minimum=1,
        aliases=("train.num_workers",),
    ),
)


# Of families whose job has parameter servers.
PS = Attr(
    "train.ps",
    "int",
    None,
    "SQLFlow's parameter servers of a distributed Keras training; not applied: sqlml "
    "trains Keras models in one process",
    minimum=1,
    aliases=("train.num_ps",),
)


# SQLFlow's resources of the pods of a distributed training on PAI.
PAI_RESOURCES = tuple(
    not_applied(
        f"train.{name}",
        "int",
        f"SQLFlow on PAI: {doc}",
        "the pods of sqlml's Kubeflow job get the requests of train.cpu and train.memory (or "
        "the Argo backend's --cpu and --memory options)",
        minimum=0,
    )
    for name, doc in (
        ("worker_cpu", "CPU of each worker (1/100 CPU)"),
        ("worker_gpu", "GPUs of each worker"),
        ("ps_cpu", "CPU of each parameter server (1/100 CPU)"),
        ("ps_gpu", "GPUs of each parameter server"),
        ("num_evaluator", "evaluator pods"),
        ("evaluator_cpu", "CPU of each evaluator (1/100 CPU)"),
        ("evaluator_gpu", "GPUs of each evaluator"),
    )
)


def schema(*attrs: Attr, parameter_servers: bool = False) -> dict[str, Attr]:
    """An estimator's attributes by name: ``attrs``, then those every estimator takes
    (``train.ps`` too with ``parameter_servers``)."""
    common = (
        EXTERNAL_MEMORY,
        *VALIDATION,
        *DISTRIBUTED,
        *((PS,) if parameter_servers else ()),
        *pod_resources("train").values(),
    )
    return {attr.name: attr for attr in (*attrs, *common)}
