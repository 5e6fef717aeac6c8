"""sqlml's layers, as docs/architecture.md draws them: each module imports only its own
layer and the layers below, and no modules import each other in a cycle.

Every ``import`` counts, those inside functions too (a lazy import is still a dependency),
except those under ``if TYPE_CHECKING:`` (never run); so does a module named in a string to
``importlib.import_module`` or ``sqlml.imports.load``. The registries (``sqlml.plugins``, in
the foundations) load the extensions, so no layer reaches up to find them.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sqlml"

# Lowest first. A module belongs to the layer of the longest pattern that names it or a package
# holding it (``*`` stands for one name). The package root holds only the version and the
# IPython entry point, which imports the magic by name.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundations", ("sqlml.errors", "sqlml.tables", "sqlml.metrics", "sqlml.metric_values",
                     "sqlml.search_space", "sqlml.local_files", "sqlml.imports",
                     "sqlml.interrupted", "sqlml.plugins", "sqlml")),
    # A statement kind's folder: its rules' builders and AST node (syntax) are grammar, its
    # analysis semantics, its handler a handler, the rest IR.
    ("grammar", ("sqlml.grammar", "sqlml.statements.*.syntax")),
    ("ir", ("sqlml.ir", "sqlml.statements")),
    # A model family's declarations are read by the analysis; its trainer is a model's.
    ("semantics", ("sqlml.semantics", "sqlml.models", "sqlml.statements.*.analysis")),
    # A pass over the IR; it reads the SQL lineage of the semantics.
    ("plan", ("sqlml.plan",)),
    # The data layer: datasources (one folder each), readers, the spool and the cache, a
    # running statement's context, the execution of a statement (its handler found by name).
    ("runtime", ("sqlml.datasources", "sqlml.runtime")),
    # A model family's trainer and scorer, over the data layer; the store beside them, and a
    # stored model applied to rows (what TO PREDICT, TO EVALUATE and TO EXPLAIN share).
    ("models", ("sqlml.models.*.model", "sqlml.models.*.distributed", "sqlml.models.store",
                "sqlml.models.export", "sqlml.models.applied", "sqlml.models.in_query")),
    # A statement kind's handler, in its folder, above the models it drives.
    ("handlers", ("sqlml.statements.*.handler",)),
    ("workflow", ("sqlml.workflow", "sqlml.steps")),
    ("codegen", ("sqlml.codegen",)),
    # Each backend is one package: its code generation, submission, status and logs.
    ("backends", ("sqlml.backends",)),
    ("front ends", ("sqlml.checking", "sqlml.junit", "sqlml.run_results", "sqlml.repl",
                    "sqlml.ui", "sqlml.cli", "sqlml.workflow_cli", "sqlml.__main__")),
]  # fmt: skip


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _names(pattern: str, module: str) -> bool:
    """Whether ``pattern`` names ``module`` or a package holding it (the root only itself)."""
    wanted, parts = pattern.split("."), module.split(".")
    if pattern == "sqlml":
        return module == "sqlml"
    return len(parts) >= len(wanted) and all(
        fnmatch.fnmatchcase(part, name) for part, name in zip(parts, wanted, strict=False)
    )


def layer(module: str) -> int:
    matches = [
        (len(pattern.split(".")), rank)
        for rank, (_, patterns) in enumerate(LAYERS)
        for pattern in patterns
        if _names(pattern, module)
    ]
    assert matches, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return max(matches)[1]


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node under ``body``, leaving out ``if TYPE_CHECKING:`` blocks."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _statements(node.orelse)
            continue
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _statements([child])
            else:
                yield from ast.walk(child)


def imports(module: str) -> set[str]:
    """The sqlml modules ``module`` imports (a name imported from a package counts as its
    module when it is one)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                found.add(candidate if candidate in MODULES else source)
        elif isinstance(node, ast.Call) and _imports_by_name(node):
            found.add(_named_module(node.args[0], module if path.name == "__init__.py" else ""))
    return {name for name in found if name in MODULES and name != module}


def _imports_by_name(call: ast.Call) -> bool:
    """Whether ``call`` is ``import_module(...)`` or ``imports.load(...)``."""
    name = ast.unparse(call.func)
    return (
        bool(call.args)
        and name.rpartition(".")[2] in ("import_module", "load")
        and (name in ("import_module", "importlib.import_module", "imports.load"))
    )


def _named_module(argument: ast.expr, package: str) -> str:
    """The module a string names: a constant, or an f-string from ``__name__`` (a package's
    own module) as far as its constant part goes."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.JoinedStr) and argument.values:
        head, *rest = argument.values
        if isinstance(head, ast.FormattedValue) and ast.unparse(head.value) == "__name__":
            tail = rest[0].value if rest and isinstance(rest[0], ast.Constant) else ""
            return package + str(tail) if len(rest) == 1 else package
    return ""


# IPython's ``%load_ext sqlml`` calls the package root's hook, which loads the magic.
KNOWN_CLIMBS = {("sqlml", "sqlml.repl.magic")}

GRAPH = {
    module: imports(module) - {target for source, target in KNOWN_CLIMBS if source == module}
    for module in MODULES
}


def test_each_known_climb_is_still_made():
    assert all(target in imports(source) for source, target in KNOWN_CLIMBS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module):
    upward = sorted(
        f"{target} ({LAYERS[layer(target)][0]})"
        for target in GRAPH[module]
        if layer(target) > layer(module)
    )
    assert upward == [], f"{module} ({LAYERS[layer(module)][0]}) imports {', '.join(upward)}"


def test_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            group.append(node)
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_within(graph, set(group)) for group in groups]


def _path_within(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A cycle inside ``group``, from its first module back to it."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for target in sorted(graph[node] & group):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                frontier.append(target)
    raise AssertionError(f"no cycle through {start}")


# Libraries only a family's trainer imports (the scikit-learn family's); TensorFlow and Keras
# only the Keras family's library module, which keeps their logs quiet.
TRAINER_LIBRARIES = {
    "tensorflow": "sqlml.models.keras.library",
    "keras": "sqlml.models.keras.library",
    "sklearn": "sqlml.models.sklearn.model",
    "skops": "sqlml.models.sklearn.model",
}


def libraries(module: str) -> set[str]:
    """The top-level names of the modules outside sqlml that ``module`` imports."""
    found: set[str] = set()
    for node in _statements(ast.parse(MODULES[module].read_text()).body):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found - {"sqlml"}


@pytest.mark.parametrize("library", sorted(TRAINER_LIBRARIES))
def test_a_trainer_library_is_imported_by_its_family_trainer_only(library):
    owner = TRAINER_LIBRARIES[library]
    importers = sorted(m for m in MODULES if library in libraries(m) and not _names(owner, m))
    assert importers == [], f"{library} is imported outside {owner}: {', '.join(importers)}"


def test_the_checker_finds_what_it_must():
    # Negative controls: a cycle, and a module of a lower layer importing a higher one.
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert layer("sqlml.runtime.execute") < layer("sqlml.repl.session")
    assert layer("sqlml.models.registry") < layer("sqlml.models.xgboost.model")
    assert layer("sqlml") < layer("sqlml.grammar.parser")
    assert "sqlml.errors" in imports("sqlml.grammar.parser")
    assert {"sklearn", "skops"} <= libraries("sqlml.models.sklearn.model")


def test_a_module_named_in_a_string_is_an_import():
    call = ast.parse('import_module("sqlml.repl.magic")').body[0].value  # type: ignore[attr-defined]
    assert _imports_by_name(call) and _named_module(call.args[0], "") == "sqlml.repl.magic"
    own = ast.parse('import_module(f"{__name__}.kubeflow")').body[0].value  # type: ignore[attr-defined]
    assert _named_module(own.args[0], "sqlml.steps") == "sqlml.steps.kubeflow"
