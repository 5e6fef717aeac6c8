"""The attributes every estimator takes, whatever its family, and the limits they share."""

from __future__ import annotations

from sqlml.semantics.attributes import Attr

# A prediction batch holds rows x classes probabilities.
MAX_CLASSES = 10_000

# Data larger than memory.
EXTERNAL_MEMORY = Attr(
    "train.external_memory",
    "bool",
    False,
    "stream the rows in batches instead of reading them all into memory (XGBoost: external "
    "memory, cache files in a temporary folder; Keras: tf.data); feature columns (and Keras's "
    "normalisation) are derived from the first 100,000 rows, the classes from SELECT DISTINCT "
    "label; validation.split holds out rows of each batch, not stratified; not for rankers",
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
)

# How a TO TRAIN runs on Kubernetes (sqlml compile --target argo).
DISTRIBUTED = (
    Attr(
        "train.distributed",
        "bool",
        None,
        "on Kubernetes (compile --target argo), train in a Kubeflow job: a TFJob (Keras) or "
        "an XGBoostJob (XGBoost); unset: when train.workers or train.ps is given. Local runs "
        "train in-process",
    ),
    Attr(
        "train.workers",
        "int",
        None,
        "worker pods of the distributed job, besides its chief (TFJob) or master "
        "(XGBoostJob); 2 when unset",
        minimum=1,
    ),
)
# Of families whose job has parameter servers.
PS = Attr("train.ps", "int", None, "parameter-server pods of the TFJob (Keras)", minimum=1)


def schema(*attrs: Attr, parameter_servers: bool = False) -> dict[str, Attr]:
    """An estimator's attributes by name: ``attrs``, then those every estimator takes
    (``train.ps`` too with ``parameter_servers``)."""
    common = (EXTERNAL_MEMORY, *VALIDATION, *DISTRIBUTED, *((PS,) if parameter_servers else ()))
    return {attr.name: attr for attr in (*attrs, *common)}
