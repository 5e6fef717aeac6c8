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

With ``--format onnx`` (:func:`export_onnx`), a model its family converts
(:meth:`~sqlml.models.Family.to_onnx`: scikit-learn's through skl2onnx, XGBoost's and
LightGBM's through onnxmltools, an imported ONNX model as it is) goes to an ``.onnx`` file.

With ``--format sql`` (:func:`export_sql`), a model its family compiles
(:meth:`~sqlml.models.Family.to_sql`) goes to a SQL file that a database runs without sqlml:
a header of comments (the model, the columns it reads, the caveats), then
``CREATE VIEW <model>_predictions AS SELECT <the table's columns>, <the prediction> AS
<label> FROM <table>``, in the dialect of the datasource or the one chosen.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlglot import exp

from sqlml.datasources import Datasource
from sqlml.errors import DatasourceError, ModelError, SqlmlError
from sqlml.models import families, family
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
    datasource: Datasource, name: str, file: Path, version: int | str | None = None
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


def export_onnx(
    datasource: Datasource, name: str, file: Path, version: int | None = None
) -> StoredModel:
    """Write ``version`` of model ``name`` (default: the newest), converted to ONNX by its
    family (:meth:`~sqlml.models.Family.to_onnx`), to ``file``; a :class:`ModelError`
    naming the families that convert when its family does not."""
    stored = ModelStore(datasource).load(name, version)
    if file.suffix.lower() != ".onnx":
        raise ModelError(
            f"sqlml export --format onnx writes .onnx files, not {file.name}",
            hint=f"name the file e.g. {file.with_suffix('.onnx').name}",
        )
    model_family = family(stored.metadata["family"])
    if not model_family.converts_to_onnx():
        converting = [f.title for f in families().values() if f.converts_to_onnx()]
        raise ModelError(
            f"model {name} ({stored.metadata['estimator']}, {model_family.title}) cannot be "
            "converted to ONNX",
            hint=f"ONNX exports are of {', '.join(converting)} models; export this one in its "
            f"library's format ({' or '.join(model_family.extensions)}: sqlml export MODEL FILE)",
        )
    data = model_family.to_onnx(stored)
    _write(file, lambda path: path.write_bytes(data))
    return stored


def export_sql(
    datasource: Datasource,
    name: str,
    file: Path,
    dialect: str | None = None,
    table: str | None = None,
    version: int | str | None = None,
) -> StoredModel:
    """Write ``version`` of model ``name`` (default: the newest), compiled into SQL of
    ``dialect`` (default: the datasource's), as a view of its predictions for the rows of
    ``table`` (default: the table its training SELECT read) to ``file``.

    The view selects the table's columns but the label (as TO PREDICT writes its rows), all
    of them (``*``) when the table is not in the datasource (a name for the database the
    file will run in).
    """
    stored = ModelStore(datasource).load(name, version)
    compiled = family(stored.metadata["family"]).to_sql(stored)
    dialect = dialect or datasource.dialect
    label = stored.metadata["label"] or "prediction"
    parts = table.split(".") if table else _training_table(stored, datasource.dialect)
    selected: list[exp.Expression] = [exp.Star()]
    found = _columns(datasource, parts)
    if found:
        selected = [exp.column(c, quoted=True) for c in found if c != label]
    select = exp.select(*selected, exp.alias_(compiled.value, label, quoted=True)).from_(
        exp.table_(parts[-1], *reversed(parts[:-1]), quoted=True)
    )
    view = exp.Create(
        this=exp.table_(f"{name}_predictions", quoted=True), kind="VIEW", expression=select
    )
    header = [
        f"model {name} version {stored.version} ({stored.metadata['estimator']}), compiled "
        f"into SQL for {dialect} by sqlml {stored.metadata['sqlml_version']}'s export",
        f"it reads the columns {', '.join(compiled.columns)} (NULL as TO PREDICT reads it)",
        f"and predicts {label} as TO PREDICT writes it: the expression named {label} in the "
        "view below, which any SELECT over rows holding those columns can use",
        *compiled.notes,
    ]
    comments = "".join(f"-- {line}\n" for line in header)
    text = comments + view.sql(dialect=dialect, pretty=True) + ";\n"
    _write(file, lambda path: path.write_text(text, encoding="utf-8"))
    return stored


def _columns(datasource: Datasource, table: list[str]) -> list[str]:
    """The columns of ``table`` in ``datasource``; none if it has no such table."""
    try:
        if not datasource.table_exists(table):
            return []
        found = datasource.execute(f"SELECT * FROM {datasource.quote(table)} WHERE 1 = 0")
    except DatasourceError:  # a schema the database does not know
        return []
    return found.columns if found is not None else []


def _training_table(stored: StoredModel, dialect: str) -> list[str]:
    """The table the model's training SELECT reads, its name's parts; a :class:`SqlmlError`
    unless it reads one table."""
    import sqlglot

    from sqlml.grammar import parse

    statements = parse(stored.metadata["statement"]).statements
    select = getattr(statements[0], "select", None) if len(statements) == 1 else None
    tables = []
    if isinstance(select, str):
        try:
            tables = list(sqlglot.parse_one(select, read=dialect).find_all(exp.Table))
        except sqlglot.errors.ParseError:
            tables = []
    if len(tables) != 1:
        raise SqlmlError(
            f"model {stored.name}'s training SELECT does not read one table, whose rows "
            "the exported view would predict",
            hint="name the table with --table",
        )
    found = tables[0]
    return [part.name for part in found.parts]


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
