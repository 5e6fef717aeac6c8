"""What TO RUN may run: the user's own programs, never any function Python can import.

A function's module is runnable when it is a file (or a package) of the program file's
folder, or when ``$SQLML_RUNNABLE`` declares it (module or package names, separated by
commas: ``SQLML_RUNNABLE=mytools,team.runnables``). A module of Python's standard library
or of sqlml never is, and one installed in sqlml's Python only when declared. A script is a
``.py`` file in the program's folder or below it. Where there is no program folder (the
editor of ``sqlml ui``), only declared modules run. An image's program runs inside its
image, on the Argo backend only.

The analysis judges the name alone (:func:`by_name`); the handler, before starting the
program, and the child process, before importing it, judge it where it is
(:func:`where_found`). Nothing here imports or runs the program.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import sysconfig
from pathlib import Path, PurePath

from sqlml.errors import SqlmlError

RUNNABLE_ENV = "SQLML_RUNNABLE"
NEVER = frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names) | {"sqlml"}
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

Refusal = tuple[str, str]  # what is wrong, and the hint


def declared() -> tuple[str, ...]:
    """The modules ``$SQLML_RUNNABLE`` declares runnable (an error for a name that is no
    module's, or a module of the standard library's or sqlml's)."""
    names = [name.strip() for name in os.environ.get(RUNNABLE_ENV, "").split(",")]
    for name in filter(None, names):
        if not _MODULE.fullmatch(name):
            raise SqlmlError(
                f"{RUNNABLE_ENV} names {name!r}, which is no module's name",
                hint=f"write {RUNNABLE_ENV}=package,package.module (names separated by commas)",
            )
        if name.split(".")[0] in NEVER:
            raise SqlmlError(
                f"{RUNNABLE_ENV} names {name}, a module of {_whose(name)}, which TO RUN never runs",
                hint=f"remove it from {RUNNABLE_ENV}; declare your own modules only",
            )
    return tuple(filter(None, names))


def by_name(program: str, kind: str) -> Refusal | None:
    """Why ``program`` (a ``kind`` of TO RUN's) may not run, judged by its name; None when
    it may, wherever it is found."""
    if kind == "script":
        path = PurePath(program)
        if path.is_absolute() or os.path.normpath(program).startswith(".."):
            return (
                f"TO RUN {program}: a script runs from the program file's folder or below it",
                "put the script beside the program (or in a folder under it) and name it by "
                "its path from there",
            )
        return None
    if kind != "function":
        return None
    names = declared()  # a mistake in the setting is said first
    module = program.rpartition(".")[0]
    top = module.split(".")[0]
    if top in NEVER:
        return (
            f"TO RUN {program}: {module} is a module of {_whose(top)}, which TO RUN never runs",
            "TO RUN calls a function of your own: write it in a module beside the program",
        )
    if _declared(module, names):
        return None
    installed = _installed_at(top)
    if installed is not None:
        return (
            f"TO RUN {program}: {top} is a module installed in sqlml's Python ({installed}), "
            "not one of the program's folder, and it is not declared runnable",
            f"declare it if you mean to run it: {RUNNABLE_ENV}={top} (modules separated by "
            "commas); or rename your module of the program's folder",
        )
    return None


def where_found(program: str, kind: str, folder: Path | None) -> Refusal | None:
    """Why ``program`` may not run from ``folder`` (None: there is no program folder, as in
    sqlml ui's editor); None when it may."""
    refused = by_name(program, kind)
    if refused is not None or kind not in ("function", "script"):
        return refused
    module = program.rpartition(".")[0]
    if kind == "function" and _declared(module, declared()):
        return None
    if folder is None and kind == "script":
        return (
            f"TO RUN {program}: here there is no program folder, and so no script to run",
            "run the program with sqlml run, from the script's folder",
        )
    if folder is None:
        return (
            f"TO RUN {program}: here there is no program folder, and the module {module} is "
            "not declared runnable",
            f"declare the module in {RUNNABLE_ENV} where sqlml ui is started "
            f"({RUNNABLE_ENV}=package,... sqlml ui), or run the program with sqlml run",
        )
    if kind == "script":
        if (folder / program).resolve().is_relative_to(folder.resolve()):
            return None
        return (
            f"TO RUN {program}: the script is not in the program's folder {folder}",
            "put the script beside the program, or in a folder under it",
        )
    if _found_in(module, folder):
        return None
    return (
        f"TO RUN {program}: the module {module} is not in the program's folder {folder}, "
        "and it is not declared runnable",
        f"put {module.replace('.', '/')}.py in {folder}, or declare the module: "
        f"{RUNNABLE_ENV}={module.split('.')[0]}",
    )


def check_loaded(program: str, module_file: str | None, folder: Path) -> Refusal | None:
    """Why the imported module of ``program`` (its file ``module_file``) may not run: it
    came from elsewhere than ``folder`` and is not declared."""
    module = program.rpartition(".")[0]
    if _declared(module, declared()):
        return None
    if module_file and Path(module_file).resolve().is_relative_to(folder.resolve()):
        return None
    return (
        f"TO RUN {program}: {module} was imported from {module_file or 'no file'}, not from "
        f"the program's folder {folder}",
        f"rename your module, or declare it: {RUNNABLE_ENV}={module.split('.')[0]}",
    )


def _declared(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


def _found_in(module: str, folder: Path) -> bool:
    """Whether the top package of ``module`` is a file or a folder of ``folder``."""
    top = module.split(".")[0]
    return (folder / f"{top}.py").is_file() or (folder / top).is_dir()


def _installed_at(top: str) -> str | None:
    """Where the top-level module ``top`` is found in sqlml's Python but in its working
    folder (a file or folder; ``built-in``); None when it is not (nothing is imported)."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # a module in sys.modules without a spec
        return "loaded"
    if spec is None:
        return None
    if spec.origin in ("built-in", "frozen"):
        return spec.origin
    places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or ())
    here = Path.cwd().resolve()
    installed = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}

    def elsewhere(place: Path) -> bool:  # a virtual environment may be in the working folder
        return not place.is_relative_to(here) or any(place.is_relative_to(i) for i in installed)

    found = [p for p in places if elsewhere(Path(p).resolve())]
    return found[0] if found else None


def _whose(module: str) -> str:
    return "sqlml" if module.split(".")[0] == "sqlml" else "Python's standard library"
