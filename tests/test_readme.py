"""What README.md says that tests/test_docs_examples.py does not run: its notebook snippet
runs as written in a fresh notebook, and its list of estimators names every model family.

(README.md's commands and program run there, with the rest of the pages a newcomer reads.)
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from nbformat.v4 import new_code_cell, new_notebook

from sqlml.models import registry
from tests.conftest import ROOT
from tests.doc_blocks import blocks_of
from tests.test_magic import kernel, text

README = ROOT / "README.md"
# The list of estimators: one item per family, "- `family`: ..." (items may span lines).
FAMILY_ITEM = re.compile(r"^- `(\w+)`: (.*?)(?=^- |\Z)", re.MULTILINE | re.DOTALL)
ESTIMATOR_NAME = re.compile(r"`((?:xgboost|sklearn|sqlflow_models)\.[\w.]+|[A-Z]\w+)`")


def estimator_list() -> dict[str, str]:
    """Each family the README's list of estimators names, and the text of its item."""
    text = README.read_text()
    start = text.index("Estimators come in")
    return dict(FAMILY_ITEM.findall(text[start : text.index("\n\n", text.index("\n- ", start))]))


def test_the_estimator_list_names_every_family_and_only_estimators_that_exist():
    listed = estimator_list()
    assert list(listed) == list(registry.families())
    names = [name for item in listed.values() for name in ESTIMATOR_NAME.findall(item)]
    assert len(names) > 20
    assert [name for name in names if name not in registry.estimators()] == []


def test_the_notebook_snippet_runs_in_a_fresh_notebook(tmp_path: Path):
    """Its cells, in a kernel started in a copy of the checkout's root (examples/ is all
    they read), then a cell that looks at what they left."""
    cells = [b.text for b in blocks_of(README) if b.tag == "notebook"]
    assert cells[0] == "%load_ext sqlml\n" and cells[-1].startswith("%%sqlml flowers\n")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    notebook = new_notebook(
        cells=[new_code_cell(cell) for cell in cells]
        + [new_code_cell("print(type(flowers).__name__, flowers.shape, set(flowers['class']))")]
    )
    client, env = kernel(notebook, tmp_path)
    client.execute(env=env)  # a cell that fails raises here
    assert "setosa" in text(notebook.cells[-2].outputs)  # the cell's value, shown
    assert text(notebook.cells[-1].outputs) == "DataFrame (50, 6) {'setosa'}\n"
