"""Checks every stored model gets before its library reads it (no library needed).

A model in the models tables may have been written by anyone who can write those tables:
each family checks its format's bytes (:mod:`sqlml.models.xgboost.checks`,
:mod:`sqlml.models.keras.checks`) before its library parses them.
:data:`MAX_MODEL_BYTES` bounds every model (the model store refuses to save or load more).
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections.abc import Callable
from typing import Any

MAX_MODEL_BYTES = 1 << 30  # 1 GiB: a model's bytes, and a .keras archive's members together

# What reading a damaged zip archive raises (a zip version or compression zipfile does not
# read: NotImplementedError)
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
)

TAMPERED_HINT = (
    "train the model again; if you did not store it, check who can write the models tables"
)


_JSON_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")


def json_depth(data: bytes, limit: int, error: Callable[[str], Exception]) -> None:
    """Raise ``error(why)`` if the JSON text ``data`` nests arrays and objects more than
    ``limit`` deep; strings are skipped, nothing is parsed."""
    depth = 0
    for token in _JSON_STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS):
        if token in b"[{":
            depth += 1
            if depth > limit:
                raise error(f"it nests more than {limit} levels deep")
        elif token in b"]}":
            depth -= 1


def json_document(
    data: bytes, keys: set[str], depth: int, error: Callable[[str], Exception]
) -> dict[str, Any]:
    """The JSON object ``data`` holds, checked before it is parsed (its size, its nesting at
    most ``depth`` deep) and after (exactly ``keys``); else ``error(why)`` is raised."""
    if len(data) > MAX_MODEL_BYTES:
        raise error(f"it is {len(data):,} bytes, more than sqlml loads")
    json_depth(data, depth, error)
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as failure:
        raise error(f"it is not JSON ({failure})") from None
    if not isinstance(document, dict) or set(document) != keys:
        raise error(f"it does not hold exactly {', '.join(sorted(keys))}")
    return document


def finite(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
