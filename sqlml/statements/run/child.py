"""The child process of a TO RUN naming a Python function:
``python -m sqlml.statements.run.child`` with ``$SQLML_RUN`` set (see :mod:`.api`).

It imports ``package.module`` (the folder of the program file first on the path), once
:mod:`.runnable` has allowed it again (from that folder, or declared), calls
``function(rows, **params)`` and writes the tables it returns (``{table: columns}``); a
function may instead write them with :func:`.api.write` and return None.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path

from sqlml.statements.run import api, runnable


def main() -> int:
    spec = api.spec()
    module_name, _, function_name = spec["program"].rpartition(".")
    folder = Path(spec["folder"])
    refused = runnable.where_found(spec["program"], "function", folder)  # again, here
    if refused is None:
        sys.path.insert(0, spec["folder"])
        module = importlib.import_module(module_name)
        refused = runnable.check_loaded(spec["program"], getattr(module, "__file__", None), folder)
    if refused is not None:
        print(f"{refused[0]}\nhint: {refused[1]}", file=sys.stderr)
        return 1
    function = getattr(module, function_name, None)
    if not callable(function):
        print(f"{module_name} has no function {function_name}", file=sys.stderr)
        return 1
    result = function(api.rows(), **api.params())
    if result is None:
        return 0
    if not isinstance(result, Mapping):
        print(
            f"{spec['program']} returned a {type(result).__name__}: a function returns "
            "{table: {column: values}} (or None, having written its tables with api.write)",
            file=sys.stderr,
        )
        return 1
    for table, columns in result.items():
        api.write(table, columns)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except api.RunError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
