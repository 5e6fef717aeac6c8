"""Checks on a stored Keras model's bytes before Keras reads them (no TensorFlow needed).

- a ``.keras`` archive may hold only the members Keras writes (``config.json``,
  ``metadata.json``, ``model.weights.h5``, files under ``assets/``), each within its size
  limit and compressed at most :data:`MAX_RATIO` to 1 (Keras stores them uncompressed).
  Members are read through a bounded reader (a header that lies about a size decompresses
  no more than the limit) with their CRC checked, and Keras gets a new archive of just them;
- a Keras configuration may name only Keras's own classes and functions: no Lambda, no
  other module, nothing that could run code (:func:`foreign`).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT, ZIP_ERRORS, json_depth

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
    except ZIP_ERRORS:
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
