"""The Argo Workflows sqlml emits, compared byte for byte with reviewed files.

``tests/golden/argo/NAME.yaml`` is what ``sqlml compile PROGRAM --target argo`` writes for
each example and for a program with every statement kind (with fixed options, below). A
change to the emitted YAML fails here until the files are regenerated on purpose and the
difference reviewed:

    SQLML_REGENERATE_GOLDEN=1 python -m pytest tests/test_golden_manifests.py

Every golden file is also validated against the published schemas.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from k8s_validation import validate
from test_k8s_manifests import EVERY_KIND, EXAMPLES

from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
from sqlml.grammar import parse
from sqlml.semantics import analyze

pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

pytest.importorskip("hera.workflows.models")

GOLDEN = Path(__file__).parent / "golden" / "argo"
OPTIONS = ArgoOptions(image="registry.example.com/sqlml:1", namespace="ml")
PROGRAMS = {path.stem: path.read_text() for path in EXAMPLES} | {"every_kind": EVERY_KIND}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_emitted_workflow_is_the_reviewed_one(name):
    text = to_argo_yaml(analyze(parse(PROGRAMS[name])), name, OPTIONS)
    golden = GOLDEN / f"{name}.yaml"
    if os.environ.get("SQLML_REGENERATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no {golden}: regenerate the golden files (see this file's doc)"
    assert text == golden.read_text(), f"{name}: regenerate and review the difference"
    assert validate(yaml.safe_load(text)) == []


def test_every_golden_file_has_a_program():
    assert sorted(path.stem for path in GOLDEN.glob("*.yaml")) == sorted(PROGRAMS)
