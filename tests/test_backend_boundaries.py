"""No module outside a backend's package, ``sqlml/backends/<name>/``, imports it or names the
backend: the front ends (the CLI, the page, JUnit reports, compiled programs' command line)
and the rest of sqlml ask the ``Backend`` interface and the registry (``sqlml.backends``).

A module names a backend when it imports its package (``sqlml.backends.<name>``, however
written: ``from sqlml.backends import <name>``, a relative import, a ``module:name`` string),
holds its name as a whole string (``"argo"``, as in ``args.backend == "argo"``), or uses an
identifier holding its class's name (``LocalBackend``) or the backend's name as a word
(``argo_runs``, ``ArgoRunView``). Prose (docstrings, messages) may mention a backend. The
page's templates and assets are held to the words too. Each exception is in
:data:`ALLOWED`, with why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sqlml.backends import backend

SQLML = Path(__file__).resolve().parent.parent / "sqlml"
BACKENDS = SQLML / "backends"
NAMES = sorted(p.parent.name for p in BACKENDS.glob("*/backend.py"))
# Backend names that are also ordinary words of identifiers (a ``local`` variable, MySQL's
# LOCAL INFILE): for them only the whole string and the class's name count.
ORDINARY = {"local"}
# (module, what it names): why it may. Reviewed; keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    ("sqlml/backends/registry.py", "local"): "DEFAULT: the backend of sqlml run without "
    "--backend, sqlml -e, the shell and the page's editor",
    ("sqlml/plugins.py", "local"): "BACKENDS' first: the built-in ones in the order the CLI "
    "lists them",
    ("sqlml/plugins.py", "argo"): "the same",
}
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _owner(path: Path) -> str | None:
    """The backend whose package holds ``path``, if any."""
    relative = path.relative_to(SQLML).parts
    if len(relative) > 2 and relative[0] == "backends" and relative[1] in NAMES:
        return relative[1]
    return None


def _module(path: Path) -> str:
    parts = path.relative_to(SQLML.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, path: Path) -> list[str]:
    """The modules (and ``package.name``s) an import statement names, relative ones
    resolved against ``path``'s package."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = _module(path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.asname] if node.asname else []
    return []


def namings(path: Path, text: str | None = None) -> list[tuple[str, int, str]]:
    """The backends the module ``path`` (its ``text``: the file's) names, each with the line
    and how: (backend, line, what)."""
    owner = _owner(path)
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    docstrings = _docstrings(tree)
    classes = {name: type(backend(name)).__name__ for name in NAMES}
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for name in NAMES:
            if name == owner:
                continue
            package = f"sqlml.backends.{name}"
            for module in _imported(node, path):
                if module == package or module.startswith(f"{package}."):
                    found.append((name, line, f"imports {module}"))
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and (node.value.strip().lower() == name or node.value.startswith(f"{package}."))
            ):
                found.append((name, line, f"the string {node.value!r}"))
            for identifier in _identifiers(node):
                words = {word.lower() for word in _WORDS.findall(identifier)}
                if classes[name] in identifier or (name not in ORDINARY and name in words):
                    found.append((name, line, f"the identifier {identifier}"))
    return found


def test_the_backends_are_found():
    assert {"local", "argo"} <= set(NAMES)


def test_no_module_outside_a_backends_package_names_it():
    found = [
        f"{path.relative_to(SQLML.parent)}:{line}: names the {name} backend: {what}"
        for path in sorted(SQLML.rglob("*.py"))
        for name, line, what in namings(path)
        if (path.relative_to(SQLML.parent).as_posix(), name) not in ALLOWED
    ]
    assert not found, "\n".join(found)


def test_the_allowed_namings_are_still_there():
    """An exception no longer needed goes from the list."""
    named = {
        (path.relative_to(SQLML.parent).as_posix(), name)
        for path in sorted(SQLML.rglob("*.py"))
        for name, _, _ in namings(path)
    }
    assert set(ALLOWED) <= named, sorted(set(ALLOWED) - named)


def test_the_pages_templates_and_assets_name_no_backend():
    words = [name for name in NAMES if name not in ORDINARY]
    pattern = re.compile(rf"\b({'|'.join(words)})\b", re.IGNORECASE)
    found = [
        f"{path.relative_to(SQLML.parent)}:{number}: {line.strip()}"
        for path in sorted((SQLML / "ui").rglob("*"))
        if path.suffix in (".html", ".js", ".css")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def test_it_catches_what_it_is_meant_to():
    """A module of the page importing the Argo backend, comparing with "local", using
    LocalBackend and naming a function after Argo is caught at each; the Argo backend's own
    module only where it names the local backend."""
    text = (
        "from sqlml.backends.argo import views\n"
        "from ..backends import local\n"
        "def argo_page(args):\n"
        "    return args.backend == 'local' or isinstance(args, LocalBackend)\n"
    )
    found = {(name, line) for name, line, _ in namings(SQLML / "ui" / "probe.py", text)}
    assert found == {("argo", 1), ("local", 2), ("argo", 3), ("local", 4)}
    text = text.replace("from ..backends import", "from .. import")
    inside = {(name, line) for name, line, _ in namings(BACKENDS / "argo" / "probe.py", text)}
    assert inside == {("local", 2), ("local", 4)}
