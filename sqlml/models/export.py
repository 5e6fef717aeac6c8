"""Export a stored model to a file in its library's own format, its metadata beside it.

XGBoost models go to ``.json`` or ``.ubj`` (XGBoost's JSON or UBJSON, chosen by the file's
extension), Keras models to ``.keras``. The metadata (estimator, feature columns with their
vocabularies, label encoding, metrics, the training statement) goes to ``FILE.sqlml.json``.
It is the model's stored metadata, which never holds the datasource's URL or credentials.
Both files are written through temporary files, so a reader never sees half a file.

A model is checked as it is when sqlml loads it, before anything is written: its metadata,
then what its family checks (:meth:`~sqlml.models.Family.exporter`): an XGBoost model's
document (format, size, nesting) and parameters; a Keras archive's members (names, sizes,
compression, CRC) and configuration (Keras's own objects only), without TensorFlow. A Keras
export is the archive of the checked members.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlml.datasources import Datasource
from sqlml.errors import ModelError
from sqlml.models import family
from sqlml.models.store import ModelStore, StoredModel

METADATA_SUFFIX = ".sqlml.json"
METADATA_FIELDS = (
    "estimator",
    "family",
    "attributes",
    "params",
    "features",
    "label",
    "labels",
    "metrics",
    "statement",
    "rows",
    "validation",
    "base_model",
    "trained_at",
    "sqlml_version",
)


def export_model(
    datasource: Datasource, name: str, file: Path, version: int | None = None
) -> tuple[StoredModel, Path]:
    """Write ``version`` of model ``name`` (default: the newest) to ``file``.

    Returns the model and the path of its metadata file.
    """
    stored = ModelStore(datasource).load(name, version)
    model_family, extension = family(stored.metadata["family"]), file.suffix.lower()
    allowed = model_family.extensions
    if extension not in allowed:
        raise ModelError(
            f"model {name} ({stored.metadata['estimator']}) exports "
            f"to {' or '.join(allowed)} files, not {file.name}",
            hint=f"name the file e.g. {file.with_suffix(allowed[0]).name}",
        )
    metadata = {
        "model": name,
        "version": stored.version,
        "file": file.name,
        **{key: stored.metadata[key] for key in METADATA_FIELDS if key in stored.metadata},
    }
    _write(file, model_family.exporter(stored))
    beside = file.with_name(file.name + METADATA_SUFFIX)
    text = json.dumps(metadata, indent=2, sort_keys=True) + "\n"
    _write(beside, lambda path: path.write_text(text, encoding="utf-8"))
    return stored, beside


def _write(file: Path, save: Callable[[Path], Any]) -> None:
    """``save`` to a temporary file beside ``file`` (same extension), then rename it."""
    temporary = file.with_name(f".{file.stem}.{uuid.uuid4().hex[:8]}{file.suffix.lower()}")
    try:
        temporary.touch(exist_ok=False)  # an unwritable folder fails here, as an OSError
        save(temporary)
        os.replace(temporary, file)
    except OSError as error:
        raise ModelError(
            f"cannot write {file}: {error.strerror}",
            hint="name a file in an existing folder you can write to",
        ) from None
    finally:
        temporary.unlink(missing_ok=True)
