"""ONNX models: imported (TO IMPORT) from a file checked before onnxruntime reads it
(:mod:`.checks`), scored by onnxruntime on its CPU.

How sqlml feeds a model and reads it: either one input of shape [rows, n] (the COLUMN
columns as a matrix) or n inputs of shape [rows, 1] or [rows] (one a column, named as
COLUMN names them), of floats, doubles or integers; a classifier has a label output (a
tensor of integers or text) and class probabilities: a float tensor [rows, classes] or
ZipMap's maps, its classes read from ZipMap or the classifier operator
(``classlabels_*``), else 0 to n-1; a regressor has one float output, [rows] or [rows, 1].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import onnxruntime

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.interface import Imported
from sqlml.models.onnx import ESTIMATOR, INPUT_TYPES
from sqlml.models.onnx.checks import refused
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays

# The input types sqlml feeds: ONNX's element type -> numpy's.
NUMPY_TYPES = dict(
    zip(
        (
            onnx.TensorProto.FLOAT,
            onnx.TensorProto.DOUBLE,
            onnx.TensorProto.INT64,
            onnx.TensorProto.INT32,
        ),
        INPUT_TYPES,
        strict=True,
    )
)
_FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)
_LABELS = (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.STRING)


def import_model(data: bytes) -> Imported:
    """The model in an ONNX file, checked (:mod:`.checks`), then read as the module says;
    stored as it is."""
    model = refused(_not_imported, data)
    graph = model.graph
    initialized = {tensor.name for tensor in graph.initializer}
    inputs = [value for value in graph.input if value.name not in initialized]
    params: dict[str, Any] = {**_inputs(inputs), **_outputs(model)}
    session(data)  # onnxruntime reads it, or says why not
    classes = params.pop("labels", None)
    task = "classifier" if "classes" in params else "regressor"
    if task == "classifier" and classes is None:
        classes = list(range(params["classes"]))
    return Imported(
        data=data,
        estimator=ESTIMATOR,
        params=params,
        task=task,
        classes=classes or [],
        inputs=params["width"],
        names=params["inputs"] if params["mode"] == "columns" else None,
    )


def _inputs(inputs: list[onnx.ValueInfoProto]) -> dict[str, Any]:
    """How sqlml feeds the inputs: ``mode`` (matrix or columns), their names and types, and
    ``width``, the values a row."""
    if not inputs:
        raise _not_imported("it has no inputs")
    shapes, types = [], []
    for value in inputs:
        tensor = value.type.tensor_type
        if not value.type.HasField("tensor_type") or tensor.elem_type not in NUMPY_TYPES:
            raise _not_imported(
                f"its input {value.name!r} is not a tensor of floats, doubles or integers"
            )
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        shapes.append(dims)
        types.append(NUMPY_TYPES[tensor.elem_type])
    names = [value.name for value in inputs]
    if len(inputs) == 1 and len(shapes[0]) == 2 and shapes[0][1]:
        mode, width = "matrix", shapes[0][1]
    elif all(len(shape) in (1, 2) and shape[1:] in ([], [1]) for shape in shapes):
        mode, width = "columns", len(inputs)
    else:
        raise _not_imported(
            f"its inputs' shapes are {', '.join(map(_shape, shapes))}: sqlml feeds one input "
            "of shape [rows, n] or one input of shape [rows, 1] a column"
        )
    ranks = [len(shape) for shape in shapes]
    return {"mode": mode, "inputs": names, "input_types": types, "ranks": ranks, "width": width}


def _outputs(model: onnx.ModelProto) -> dict[str, Any]:
    """What sqlml reads of the outputs: ``output`` (a classifier's probabilities, a
    regressor's value), ``zipmap`` and, for a classifier, ``classes`` and ``labels``."""
    outputs = list(model.graph.output)
    maps = [o for o in outputs if o.type.HasField("sequence_type")]
    tensors = [o for o in outputs if o.type.HasField("tensor_type")]
    labelled = [o for o in tensors if o.type.tensor_type.elem_type in _LABELS]
    floats = [o for o in tensors if o.type.tensor_type.elem_type in _FLOATS]
    if maps and labelled:
        labels = _class_labels(model, maps[0].name)
        if labels is None:
            raise _not_imported("its ZipMap names no classes")
        return {"output": maps[0].name, "zipmap": True, "classes": len(labels), "labels": labels}
    if floats and labelled:
        dims = floats[0].type.tensor_type.shape.dim
        count = dims[1].dim_value if len(dims) == 2 and dims[1].HasField("dim_value") else 0
        labels = _class_labels(model, None)
        count = len(labels) if labels is not None else count
        if count < 2:
            raise _not_imported(f"it cannot tell the number of classes of {floats[0].name!r}")
        return {"output": floats[0].name, "zipmap": False, "classes": count, "labels": labels}
    if len(floats) == 1 and len(outputs) == 1:
        dims = floats[0].type.tensor_type.shape.dim
        if len(dims) in (1, 2) and (len(dims) == 1 or dims[1].dim_value in (0, 1)):
            return {"output": floats[0].name, "zipmap": False}
    raise _not_imported(
        "its outputs are not a classifier's (a label and probabilities) or a regressor's "
        "(one float tensor of one value a row)"
    )


def _class_labels(model: onnx.ModelProto, output: str | None) -> list[Any] | None:
    """The classes a ZipMap (the one making ``output``) or a classifier operator names."""
    for node in model.graph.node:
        if output is not None and output not in node.output:
            continue
        for attribute in node.attribute:
            if attribute.name.startswith("classlabels_"):
                try:
                    found = list(attribute.ints) or [s.decode() for s in attribute.strings]
                except UnicodeDecodeError:
                    raise _not_imported("its class labels are not UTF-8 text") from None
                if found:
                    return found
    return None


def _shape(dims: list[int | None]) -> str:
    return "[" + ", ".join("rows" if d is None else str(d) for d in dims) + "]"


def _not_imported(why: str) -> ModelError:
    return ModelError(
        f"the ONNX model file is not imported: {why}",
        hint="import an ONNX model that onnxruntime runs on its CPU, of one input [rows, n] "
        "or one input a column, saved whole in one file",
    )


def session(data: bytes) -> onnxruntime.InferenceSession:
    """onnxruntime's session of the (checked) model, on its CPU."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4  # fatal only: sqlml says its errors (the exception's)
    try:
        return onnxruntime.InferenceSession(
            data, sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime's own (Fail, InvalidGraph, NotImplemented...)
        raise _not_imported(f"onnxruntime cannot run it ({_first_line(error)})") from None


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The stored model, checked and loaded once, as a scoring function: class
    probabilities (rows x classes) or values."""
    params = metadata["params"]
    refused(_damaged, data)
    model = session(data)
    classes = metadata["labels"]["classes"]
    classifier = metadata["labels"]["task"] == "classifier"

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        x = features.matrix(one_hot=True)[0]
        if x.shape[1] != params["width"]:
            raise ModelError(
                f"the features make {x.shape[1]} columns, but the model reads {params['width']}",
                hint=TAMPERED_HINT,
            )
        parts = []
        for batch in context.batches(x, batch_size):
            parts.append(_run(model, params, batch, classes if classifier else None))
        if not parts:
            return np.empty((0, len(classes)) if classifier else 0)
        return np.concatenate(parts)

    return score


def _run(
    model: onnxruntime.InferenceSession,
    params: dict[str, Any],
    x: np.ndarray,
    classes: list[Any] | None,
) -> np.ndarray:
    """The scores of the rows ``x``: probabilities of ``classes`` (in their order), or
    values."""
    if params["mode"] == "matrix":
        feed = {params["inputs"][0]: x.astype(params["input_types"][0])}
    else:
        feed = {
            name: (x[:, i : i + 1] if rank == 2 else x[:, i]).astype(kind)
            for i, (name, kind, rank) in enumerate(
                zip(params["inputs"], params["input_types"], params["ranks"], strict=True)
            )
        }
    try:
        (found,) = model.run([params["output"]], feed)
    except Exception as error:  # onnxruntime's own, of inputs it does not take
        raise ModelError(
            f"onnxruntime cannot score the rows ({_first_line(error)})",
            hint="check that COLUMN names the columns the model reads, in its order",
        ) from None
    if classes is None:
        return np.asarray(found, dtype=np.float64).reshape(len(x))
    if params["zipmap"]:
        found = [[row[c] for c in classes] for row in found]
    scores = np.asarray(found, dtype=np.float64)
    if scores.shape != (len(x), len(classes)):
        raise ModelError(
            f"the ONNX model's {params['output']} has shape {scores.shape}, not one "
            f"probability a class ({len(classes)}) a row",
            hint=TAMPERED_HINT,
        )
    return scores


def _damaged(why: str) -> ModelError:
    return ModelError(f"the stored ONNX model is not loaded: {why}", hint=TAMPERED_HINT)


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:300]
