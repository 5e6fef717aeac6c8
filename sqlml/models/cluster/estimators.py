"""The clustering estimators: sqlml's k-means (under SQLFlow's PAI KMeans attribute names
too), and SQLFlow's DeepEmbeddingClusterModel mapped to it (its attributes that k-means has
renamed, the others ignored with a warning)."""

from __future__ import annotations

import dataclasses

from sqlml.models.attributes import schema
from sqlml.models.estimator import MATRIX_FEATURE_KINDS, Estimator
from sqlml.semantics.attributes import Attr, not_applied

MAX_CLUSTERS = 1_000

_KMEANS = (
    Attr(
        "model.n_clusters",
        "int",
        3,
        "number of clusters; TO PREDICT writes ids 0 to n_clusters - 1",
        minimum=1,
        maximum=MAX_CLUSTERS,
        architecture=True,
        aliases=("center_count", "model.center_count"),  # SQLFlow's KMeans on PAI
    ),
    Attr(
        "model.n_init",
        "int",
        10,
        "runs from different k-means++ starts; the one of least inertia is kept",
        minimum=1,
        maximum=1_000,
    ),
    Attr("model.max_iter", "int", 300, "iterations of a run at most", minimum=1),
    Attr(
        "model.tol",
        "float",
        1e-4,
        "a run stops when no centre moves more than this (in standardised units)",
        minimum=0,
    ),
    Attr("train.seed", "int", 0, "random seed of the k-means++ starts", minimum=0),
)

# The other attributes of SQLFlow's KMeans on PAI (with or without model.).
_PAI_KMEANS = (
    Attr(
        "model.excluded_columns",
        "string",
        None,
        "comma-separated selected columns that are not features: left out of the features "
        "the SELECT's columns give (SQLFlow's KMeans on PAI)",
        aliases=("excluded_columns",),
    ),
    not_applied(
        "model.idx_table_name",
        "string",
        "SQLFlow on PAI: the table the training writes each row's cluster into",
        "TO PREDICT writes each row's cluster into the table it names",
        aliases=("idx_table_name",),
    ),
)

# SQLFlow's DeepEmbeddingClusterModel: its autoencoder and refinement attributes.
_DEC_IGNORED = (
    "model.run_pretrain",
    "model.pretrain_dims",
    "model.pretrain_activation_func",
    "model.pretrain_batch_size",
    "model.train_batch_size",
    "model.pretrain_epochs",
    "model.pretrain_initializer",
    "model.pretrain_lr",
    "model.train_lr",
    "model.update_interval",
    "train.batch_size",
    "train.epoch",
    "train.verbose",
)
_DEC_RENAMED: dict[str, str | None] = {
    "model.kmeans_init": "model.n_init",
    "model.train_max_iters": "model.max_iter",
    **dict.fromkeys(_DEC_IGNORED, None),
}


def _ignored(name: str) -> Attr:
    kind = {
        "model.run_pretrain": "bool",
        "model.pretrain_dims": "int list",
        "model.pretrain_activation_func": "string",
        "model.pretrain_initializer": "string",
        "train.verbose": "int",
    }.get(name, "float")
    return Attr(name, kind, None, "SQLFlow's; ignored: sqlml clusters with k-means")


def _dec_attributes() -> tuple[Attr, ...]:
    renamed = {"model.n_init": "model.kmeans_init", "model.max_iter": "model.train_max_iters"}
    mapped = tuple(dataclasses.replace(a, name=renamed.get(a.name, a.name)) for a in _KMEANS)
    return (*mapped, *(_ignored(name) for name in _DEC_IGNORED))


ESTIMATORS = (
    Estimator(
        "KMeans",
        "cluster",
        "classifier",
        schema(*_KMEANS, *_PAI_KMEANS),
        "k-means clustering of the standardised features, without LABEL (numpy)",
        feature_kinds=MATRIX_FEATURE_KINDS,
        labelled=False,
    ),
    Estimator(
        "sqlflow_models.DeepEmbeddingClusterModel",
        "cluster",
        "classifier",
        schema(*_dec_attributes()),
        "SQLFlow's deep embedded clustering, trained as sqlml's KMeans",
        feature_kinds=MATRIX_FEATURE_KINDS,
        renamed=_DEC_RENAMED,
        labelled=False,
        instead="sqlml trains KMeans instead: k-means on the standardised features, "
        "without DEC's autoencoder embedding and refinement",
    ),
)
