"""Each statement kind's IR, Python workflow program and Argo Workflow, compared exactly with
reviewed files, as sqlglot keeps ``identity.sql``.

``tests/golden/kinds/KIND.sql`` is a small program of one kind of statement. Beside it,
``KIND.ir.json`` (its statements' IR), ``KIND.py`` (``sqlml compile --target python``) and
``KIND.argo.yaml`` (``--target argo``, fixed options) are what sqlml emits for it. A change to
any of them fails here until the files are regenerated on purpose and the difference
reviewed:

    SQLML_REGENERATE_GOLDEN=1 python -m pytest tests/test_golden_kinds.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
from sqlml.backends.local.codegen import to_python
from sqlml.grammar import parse
from sqlml.semantics import analyze

pytest.importorskip("hera.workflows.models")

GOLDEN = Path(__file__).parent / "golden" / "kinds"
PROGRAMS = sorted(GOLDEN.glob("*.sql"))
OPTIONS = ArgoOptions(image="registry.example.com/sqlml:1", namespace="ml")
OUTPUTS = ("ir.json", "py", "argo.yaml")


def emitted(program: Path) -> dict[str, str]:
    statements = analyze(parse(program.read_text()))
    ir = [statement.to_dict() for statement in statements]
    return {
        "ir.json": json.dumps(ir, indent=2, ensure_ascii=False) + "\n",
        "py": to_python(statements, program.stem),
        "argo.yaml": to_argo_yaml(statements, program.stem, OPTIONS),
    }


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_each_kind_emits_the_reviewed_ir_python_and_argo(program):
    for suffix, text in emitted(program).items():
        golden = program.with_suffix(f".{suffix}")
        if os.environ.get("SQLML_REGENERATE_GOLDEN") == "1":
            golden.write_text(text)
        assert golden.exists(), f"no {golden.name}: regenerate the golden files (see above)"
        assert text == golden.read_text(), f"{golden.name}: regenerate and review the difference"


def test_every_statement_kind_has_a_golden_program():
    kinds = {
        statement.kind for program in PROGRAMS for statement in analyze(parse(program.read_text()))
    }
    assert kinds == {
        "sql", "train", "search", "predict", "evaluate", "explain", "assert",
        "show_train", "show_models", "show_model_versions", "describe_model", "drop_model",
        "alter_model", "optimize", "run", "import_model",
    }  # fmt: skip


def test_every_golden_file_has_its_program():
    stems = {p.stem for p in PROGRAMS}
    for path in GOLDEN.iterdir():
        assert path.name.split(".")[0] in stems, f"{path.name} has no program"
        assert path.suffix == ".sql" or path.name.partition(".")[2] in OUTPUTS, path.name
