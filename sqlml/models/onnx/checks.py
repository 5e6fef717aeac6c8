"""Checks on an ONNX model before onnxruntime reads it: onnx parses the protocol buffer (data,
no code) and its checker validates the graph; then what sqlml refuses besides: a model
larger than :data:`~sqlml.models.checks.MAX_MODEL_BYTES`, tensors kept in other files
(external data: onnxruntime would read paths the file names), operators of domains
onnxruntime does not know (custom operators, which load code).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import onnx
from google.protobuf.message import DecodeError

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES

# The operator domains of onnxruntime's CPU kernels: ONNX's, ONNX-ML's and Microsoft's.
KNOWN_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "com.microsoft"})


class Refused(Exception):
    """What is wrong with the ONNX model, in a few words."""


def model_problem(data: bytes) -> str | None:
    """What is wrong with the ONNX model ``data``, or None."""
    try:
        checked_model(data)
    except Refused as why:
        return str(why)
    return None


def checked_model(data: bytes) -> onnx.ModelProto:
    """The model ``data`` holds, checked (see the module); else :class:`Refused`."""
    if len(data) > MAX_MODEL_BYTES:
        raise Refused(f"it is {len(data):,} bytes, more than sqlml loads ({MAX_MODEL_BYTES:,})")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError):
        raise Refused("it is not an ONNX model (its protocol buffer is malformed)") from None
    if model.ir_version < 1 or not model.opset_import or not model.graph.node:
        raise Refused("it is not an ONNX model (it has no version, opsets or graph)")
    if not all(isinstance(text, str) for text in _names(model)):
        raise Refused("its names are not UTF-8 text")
    for tensor in _tensors(model):
        if tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data):
            raise Refused(
                f"its tensor {tensor.name!r} is kept in another file (external data), which "
                "sqlml does not read"
            )
    local = {function.domain for function in model.functions}
    used = {o.domain for o in model.opset_import} | {n.domain for n in _nodes(model)}
    unknown = sorted(used - KNOWN_DOMAINS - local)
    if unknown:
        raise Refused(
            f"it uses operators of the domain {', '.join(map(repr, unknown))}, which "
            "onnxruntime does not know (custom operators load code)"
        )
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError, RuntimeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise Refused(f"onnx's checker refuses it: {first[:300]}") from None
    return model


def _graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto]:
    """The model's graph and every subgraph its nodes hold (If, Loop, Scan), iteratively."""
    pending = [model.graph]
    while pending:
        graph = pending.pop()
        yield graph
        for node in graph.node:
            for attribute in node.attribute:
                pending.extend([attribute.g] if attribute.HasField("g") else [])
                pending.extend(attribute.graphs)


def _nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for graph in _graphs(model):
        yield from graph.node
    for function in model.functions:
        yield from function.node


def _names(model: onnx.ModelProto) -> Iterator[Any]:
    """Every name and domain the model's graphs, nodes and opsets hold (protobuf gives the
    bytes of one that is not UTF-8)."""
    yield from (opset.domain for opset in model.opset_import)
    for function in model.functions:
        yield from (function.name, function.domain, *function.input, *function.output)
    for graph in _graphs(model):
        for value in (*graph.input, *graph.output, *graph.value_info, *graph.initializer):
            yield value.name
    for node in _nodes(model):
        yield from (node.op_type, node.domain, *node.input, *node.output)
        yield from (attribute.name for attribute in node.attribute)


def _tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor the model holds: initializers (sparse ones' values and indices too) and
    attributes' tensors, in every graph and function."""
    for graph in _graphs(model):
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield from (sparse.values, sparse.indices)
    for node in _nodes(model):
        for attribute in node.attribute:
            yield from [attribute.t] if attribute.HasField("t") else []
            yield from attribute.tensors


def refused(error: Callable[[str], ModelError], data: bytes) -> Any:
    """The checked model, or ``error(why)`` raised."""
    try:
        return checked_model(data)
    except Refused as why:
        raise error(str(why)) from None
