"""Checks on a stored model's bytes before XGBoost or Keras reads them (no library needed).

A model in the models tables may have been written by anyone who can write those tables,
so its bytes are checked before a library parses them:

- an XGBoost model must be XGBoost's JSON or UBJSON (as XGBoost tells them apart) nested at
  most :data:`MAX_DEPTH` levels: XGBoost's parser recurses, and a document nested 200,000
  levels deep crashes the process. The scan is iterative and skips UBJSON's typed arrays
  whole, so it reads a large model in milliseconds;
- a Keras ``.keras`` archive may hold only the members Keras writes (``config.json``,
  ``metadata.json``, ``model.weights.h5``, files under ``assets/``), each within its size
  limit and compressed at most :data:`MAX_RATIO` to 1 (Keras stores them uncompressed).
  Members are read through a bounded reader (a header that lies about a size decompresses
  no more than the limit) with their CRC checked, and Keras gets a new archive of just them;
- a Keras configuration may name only Keras's own classes and functions: no Lambda, no
  other module, nothing that could run code (:func:`foreign`).

:data:`MAX_MODEL_BYTES` bounds every model (the model store refuses to save or load more).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from typing import Any

from sqlml.errors import ModelError

MAX_MODEL_BYTES = 1 << 30  # 1 GiB: a model's bytes, and a .keras archive's members together
MAX_DEPTH = 32  # XGBoost's documents nest about 8 levels
MAX_CONFIG_DEPTH = 64  # a Keras configuration: about 10 levels, 20 with nested models
MAX_CONFIG_BYTES = 16 << 20  # config.json
MAX_RATIO = 100  # uncompressed to compressed size of a member above SMALL_MEMBER
SMALL_MEMBER = 1 << 20
KERAS_MEMBERS = {  # the members of a .keras archive, and their size limits
    "config.json": MAX_CONFIG_BYTES,
    "metadata.json": 1 << 20,
    "model.weights.h5": MAX_MODEL_BYTES,
}
_ASSETS = "assets/"
_READ = 1 << 20

TAMPERED_HINT = (
    "train the model again; if you did not store it, check who can write the models tables"
)


def xgboost_document(data: bytes) -> None:
    """A :class:`ModelError` unless ``data`` is XGBoost JSON or UBJSON nested at most
    :data:`MAX_DEPTH` levels.

    XGBoost reads a document starting ``{"`` as JSON and ``{`` and a letter as UBJSON.
    """
    if len(data) > MAX_MODEL_BYTES:
        raise _xgboost(f"it is {len(data):,} bytes, more than sqlml loads ({MAX_MODEL_BYTES:,})")
    if data[:2] == b'{"':
        json_depth(data, MAX_DEPTH, _xgboost)
    elif data[:1] == b"{" and data[1:2].isalpha():
        _ubjson_depth(data)
    else:
        raise not_xgboost()


def not_xgboost(reason: str | None = None) -> ModelError:
    """The error of bytes that are not an XGBoost model (``reason``: XGBoost's words)."""
    why = (
        f"XGBoost says: {reason}"
        if reason
        else "sqlml never loads pickles or other formats that can run code"
    )
    return ModelError(
        "the stored XGBoost model is not in XGBoost's JSON or UBJSON format and is not "
        f"loaded ({why})",
        hint=TAMPERED_HINT,
    )


def _xgboost(why: str) -> ModelError:
    return ModelError(f"the stored XGBoost model is not loaded: {why}", hint=TAMPERED_HINT)


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


def json_depth(data: bytes, limit: int, error: Callable[[str], Exception]) -> None:
    """Raise ``error(why)`` if the JSON text ``data`` nests arrays and objects more than
    ``limit`` deep; strings are skipped, nothing is parsed."""
    depth = 0
    for match in _JSON_TOKENS.finditer(data):
        token = data[match.start()]
        if token in b"[{":
            depth += 1
            if depth > limit:
                raise error(f"it nests more than {limit} levels deep")
        elif token in b"]}":
            depth -= 1


# UBJSON: the markers XGBoost writes, each with the size of its value in bytes.
_INTEGERS = {ord("i"): (1, True), ord("U"): (1, False), ord("I"): (2, True)}
_INTEGERS |= {ord("l"): (4, True), ord("L"): (8, True)}
_SCALARS = {marker: size for marker, (size, _) in _INTEGERS.items()}
_SCALARS |= {ord("d"): 4, ord("D"): 8, ord("T"): 0, ord("F"): 0, ord("Z"): 0}
_OPEN = {ord("["): ord("]"), ord("{"): ord("}")}


class _Malformed(Exception):
    """The UBJSON document is cut short or holds something XGBoost does not write."""


def _ubjson_depth(data: bytes) -> None:
    """A :class:`ModelError` unless ``data`` is one well-formed UBJSON value nested at most
    :data:`MAX_DEPTH` deep. Typed arrays (``[$<type>#<count>``) are skipped whole."""
    try:
        end = _ubjson_end(data)
    except (_Malformed, IndexError):
        raise _xgboost("its UBJSON is malformed or cut short") from None
    if end != len(data):
        raise _xgboost("its UBJSON has bytes after the model")


def _ubjson_end(data: bytes) -> int:
    """Where the value at the start of ``data`` ends. Iterative: a stack of the open
    containers, each its closing marker and the values it has left (None: until closed)."""
    at = 0
    stack: list[list[Any]] = []

    def integer() -> int:
        nonlocal at
        size, signed = _INTEGERS.get(data[at], (0, False))
        if not size:
            raise _Malformed
        value = int.from_bytes(data[at + 1 : at + 1 + size], "big", signed=signed)
        at += 1 + size
        if value < 0 or at > len(data):
            raise _Malformed
        return value

    def skip(size: int) -> None:
        nonlocal at
        at += size
        if at > len(data):
            raise _Malformed

    while True:
        if stack:
            closing, left = stack[-1]
            if left is None and data[at] == closing:
                at += 1
                stack.pop()
                if not stack:
                    return at
                continue
            if left == 0:
                stack.pop()
                if not stack:
                    return at
                continue
            if left is not None:
                stack[-1][1] = left - 1
            if closing == ord("}"):
                skip(integer())  # the key
        marker = data[at]
        at += 1
        if marker in _OPEN:
            if len(stack) == MAX_DEPTH:
                raise _xgboost(f"it nests more than {MAX_DEPTH} levels deep")
            typed = None
            if data[at] == ord("$"):
                typed, at = data[at + 1], at + 2
                if typed not in _SCALARS or marker != ord("[") or data[at] != ord("#"):
                    raise _Malformed
            count = None
            if data[at] == ord("#"):
                at += 1
                count = integer()
            if typed is None:
                stack.append([_OPEN[marker], count])
                continue
            skip(_SCALARS[typed] * count)
        elif marker in _SCALARS:
            skip(_SCALARS[marker])
        elif marker == ord("S"):
            skip(integer())
        else:
            raise _Malformed
        if not stack:
            return at


def keras_archive(data: bytes) -> bytes:
    """The ``.keras`` archive ``data``, checked and written anew with only its known
    members; a :class:`ModelError` if it is not one, or its configuration names anything
    but Keras's own objects."""
    members = _members(data)
    try:
        config = json.loads(members["config.json"])
    except (ValueError, RecursionError):
        raise keras_error("its config.json is not JSON") from None
    found = foreign(config)
    if found:
        raise keras_error(f"its configuration names {found}, which could run code")
    missing = [name for name in KERAS_MEMBERS if name not in members]
    if missing:
        raise keras_error(f"it has no {', '.join(missing)}")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def keras_error(why: str) -> ModelError:
    return ModelError(f"the stored Keras model is not loaded: {why}", hint=TAMPERED_HINT)


def _members(data: bytes) -> dict[str, bytes]:
    """The archive's members, checked (names, sizes, compression, CRC) and read boundedly;
    config.json also checked for its nesting depth."""
    if len(data) > MAX_MODEL_BYTES:
        raise keras_error(f"it is {len(data):,} bytes, more than sqlml loads")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            total = sum(info.file_size for info in infos)
            if total > MAX_MODEL_BYTES:
                raise keras_error(f"its members hold {total:,} bytes, more than sqlml loads")
            members = {}
            for info in infos:
                limit = _check_member(info, members)
                if info.is_dir():
                    continue
                members[info.filename] = _read(archive, info, limit)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
        raise keras_error("it is not a .keras archive, or a damaged or cut-short one") from None
    if "config.json" not in members:
        raise keras_error("it is not a .keras archive: it has no config.json")
    json_depth(members["config.json"], MAX_CONFIG_DEPTH, keras_error)
    return members


def _check_member(info: zipfile.ZipInfo, seen: dict[str, bytes]) -> int:
    """The size limit of a member; a :class:`ModelError` if it has no place in a .keras
    archive, is given twice, encrypted, or larger (or more compressed) than allowed."""
    name = info.filename
    asset = name.startswith(_ASSETS) and ".." not in name.split("/") and "\\" not in name
    if name not in KERAS_MEMBERS and not asset:
        raise keras_error(f"it holds {name!r}, which a .keras archive does not")
    if name in seen:
        raise keras_error(f"it holds {name!r} twice")
    if info.flag_bits & 1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise keras_error(f"its member {name!r} is encrypted or compressed in an unusual way")
    limit = KERAS_MEMBERS.get(name, MAX_MODEL_BYTES)
    if info.file_size > limit:
        raise keras_error(f"its member {name} is {info.file_size:,} bytes, over {limit:,}")
    if info.file_size > max(SMALL_MEMBER, MAX_RATIO * info.compress_size):
        raise keras_error(
            f"its member {name} is compressed {info.file_size:,} to {info.compress_size:,} "
            "bytes, more than any model is (a zip bomb?)"
        )
    return info.file_size


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """A member's bytes: at most ``limit`` (its declared size) are decompressed, and its
    CRC is checked (zipfile raises BadZipFile at the end of a member whose CRC differs)."""
    parts, size = [], 0
    with archive.open(info) as member:
        while chunk := member.read(min(_READ, limit + 1 - size)):
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                raise keras_error(f"its member {info.filename} is larger than its header says")
    if size != info.file_size:
        raise keras_error(f"its member {info.filename} is cut short")
    return b"".join(parts)


# Keras's own serialised values that are plain data, not classes or functions.
_PLAIN_DATA = {"__keras_tensor__", "__tensor__", "__numpy__", "__bytes__", "__slice__"}
_PLAIN_DATA |= {"__ellipsis__"}
# The Keras modules a model's classes and functions may come from: layers, initialisers,
# regularisers, constraints, activations, optimisers, losses, metrics, models.
_KERAS_MODULES = re.compile(
    r"keras(\.(layers|initializers|regularizers|constraints|activations|optimizers|losses|"
    r"metrics|ops|models|src\.(layers|models|ops|optimizers|initializers|activations|losses|"
    r"metrics|regularizers|constraints|dtype_policies))(\.\w+)*)?"
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*", re.ASCII)


def foreign(config: Any) -> str | None:
    """The first object of a serialised Keras model that is not Keras's own, if any.

    An object (a dict with ``class_name``) must name a plain identifier (no dots) that has
    nothing of a Lambda, from a module of Keras's own, with no other ``registered_name``;
    a function (``class_name`` "function") names the function in ``config``, from Keras or
    ``builtins`` (which Keras resolves among its own functions only). Keras's serialised
    tensors, arrays and bytes are plain data. Iterative: the depth is bounded elsewhere,
    but no recursion is needed.
    """
    pending = [config]
    while pending:
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(reversed(value))
            continue
        if not isinstance(value, dict):
            continue
        if "class_name" in value:
            found = _foreign_object(value)
            if found:
                return found
        pending.extend(reversed(list(value.values())))
    return None


def _foreign_object(config: dict[str, Any]) -> str | None:
    name, module = config.get("class_name"), config.get("module")
    registered = config.get("registered_name")
    if not isinstance(name, str):
        return f"the object {str(name)[:80]!r}"
    if name in _PLAIN_DATA:
        return None
    texts = [text for text in (name, registered, config.get("config")) if isinstance(text, str)]
    if any("lambda" in text.lower() for text in texts):
        return "a Lambda"
    if not _IDENTIFIER.fullmatch(name) or name.startswith("__"):
        return f"the object {name[:80]!r}"
    shown = name
    if name == "function":  # a function is serialised by its name
        function = config.get("config")
        if not isinstance(function, str) or not _IDENTIFIER.fullmatch(function):
            return f"the function {str(function)[:80]!r}"
        shown = function
    own = isinstance(module, str) and (
        _KERAS_MODULES.fullmatch(module) or (name == "function" and module == "builtins")
    )
    if not own or registered not in (None, name):
        if isinstance(registered, str) and registered != name:
            shown = registered
        where = module if isinstance(module, str) and module else "user code"
        return f"{shown[:80]} (from {where[:80]})"
    return None
