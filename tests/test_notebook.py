"""A notebook run by nbclient in a real kernel: the datasource's confirmation, {{name}}
templates, a hyperparameter search, progress, a plot, and a cell cancelled by a kernel
interrupt."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from tests.test_magic import iris_file, kernel, text

PASSWORD = "hunter2"
# Cells to interrupt (as Jupyter's Interrupt button does), each once it shows this text.
ENDLESS = (
    "%%sqlml\nSELECT * FROM iris_train\n"
    "TO TRAIN xgboost.gbtree WITH train.num_boost_round = 1000000 LABEL class INTO endless;"
)
RETRAIN = (  # a model that has a version already
    "%%sqlml\nSELECT * FROM {{table}}\n"
    "TO TRAIN xgboost.gbtree WITH train.num_boost_round = 1000000 LABEL {{label}} INTO petals;"
)
LONG_QUERY = (  # a query of hours, once the statement before it has shown its summary
    "%%sqlml\nSELECT * FROM iris_test TO PREDICT first_pred.class USING petals;\n"
    "SELECT count(*) FROM first_pred, range(1000000000000) a;"
)
INTERRUPTED = {ENDLESS: "training", RETRAIN: "training", LONG_QUERY: "predicted 30 rows"}


async def run_interrupting(notebook: nbformat.NotebookNode, folder: Path) -> None:
    """Execute ``notebook``'s cells in order, interrupting those of INTERRUPTED once they
    show their text (the statement is under way; a cell's end is awaited 600 s at most)."""
    client, env = kernel(notebook, folder, timeout=600)
    async with client.async_setup_kernel(env=env):
        for index, cell in enumerate(notebook.cells):
            running = asyncio.ensure_future(client.async_execute_cell(cell, index))
            if cell.source in INTERRUPTED:
                while INTERRUPTED[cell.source] not in text(cell.outputs):
                    assert not running.done(), text(cell.outputs)
                    await asyncio.sleep(0.1)
                await client.km.interrupt_kernel()
            await running


def test_a_notebook_templates_names_searches_plots_and_cancels(tmp_path):
    database = iris_file(tmp_path)
    cells = [
        ("%load_ext sqlml", False),
        (f"%sqlml --datasource duckdb:///{database}", False),
        (f"%sqlml --datasource mysql://root:{PASSWORD}@127.0.0.1:1/test", True),
        (
            "table, label, model = 'iris_train', 'class', 'petals'\n"
            "features = ['petal_length', 'petal_width']\n"
            "evil = 'iris_train; DROP TABLE iris_train'",
            False,
        ),
        (
            "%%sqlml\nSELECT {{features}}, {{label}} FROM {{table}}\n"
            "TO TRAIN xgboost.gbtree WITH train.num_boost_round = 5\n"
            "COLUMN {{features}} LABEL {{label}} INTO {{model}};",
            False,
        ),
        ("%%sqlml\nSELECT 1;\nSELECT * FROM {{evil}};", True),
        (
            "%%sqlml\nSELECT * FROM iris_train TO TRAIN xgboost.gbtree\n"
            "WITH max_depth = CHOICE(2, 3), search.trials = 2, train.num_boost_round = 5\n"
            "LABEL class INTO searched;",
            False,
        ),
        (
            "%%sqlml predicted\nSELECT * FROM iris_test TO PREDICT pred.class USING searched;\n"
            "SELECT count(*) AS n FROM pred;",
            False,
        ),
        (
            "%%sqlml\nSELECT * FROM iris_test TO EVALUATE {{model}}\n"
            "WITH evaluate.plot = 'eval.png' LABEL class INTO metrics;",
            False,
        ),
        (ENDLESS, True),
        (RETRAIN, True),
        (LONG_QUERY, True),
        ("%%sqlml models\nSHOW MODELS;", False),
        (
            "%%sqlml versions\n"
            "SELECT version FROM sqlml_model_versions WHERE name = :model ORDER BY 1;",
            False,
        ),
        (
            "print(sorted(models.iloc[:, 0]), predicted.n[0], versions.version.tolist())\n"
            "%sqlml SELECT count(*) AS n FROM {{table}} WHERE {{label}} <> :evil",
            False,
        ),
    ]
    notebook = new_notebook(
        cells=[
            new_code_cell(source, metadata={"tags": ["raises-exception"]} if fails else {})
            for source, fails in cells
        ]
    )
    asyncio.run(run_interrupting(notebook, tmp_path))
    outputs = [cell.outputs for cell in notebook.cells]

    assert text(outputs[1]).startswith(f"connected to duckdb:///{database} (DuckDB v")
    (refused,) = outputs[2]
    assert refused.output_type == "error"
    assert refused.traceback[0].startswith("--datasource: error: ")
    assert refused.traceback[-1] == f"  the datasource stays duckdb:///{database}"
    assert PASSWORD not in "\n".join(refused.traceback)

    trained = text(outputs[4])
    assert "trained petals (xgboost.gbtree) on 96 rows" in trained
    assert any("<progress" in o.get("data", {}).get("text/html", "") for o in outputs[4])
    (evil,) = outputs[5]
    assert evil.traceback[0] == (
        "cell:3:15: error: {{evil}} is 'iris_train; DROP TABLE iris_train', "
        "not a table or column name"
    )
    assert evil.traceback[2:] == ["3 | SELECT * FROM {{evil}};", "  |               ^"]

    assert "searched 2 trials of searched: best trial" in text(outputs[6])
    images = [o for o in outputs[8] if "image/png" in o.get("data", {})]
    assert len(images) == 1 and (tmp_path / "eval.png").is_file()

    cancelled = "the statement was cancelled (kernel interrupt); nothing it did was committed"
    for index, line in ((9, 2), (10, 2), (11, 3)):
        (error,) = [o for o in outputs[index] if o.output_type == "error"]
        assert error.traceback == [f"cell:{line}:1: error: {cancelled}"]
    # Nothing saved: no model endless, petals still at its first version; the next cells run.
    said = text(outputs[-1]).splitlines()
    assert said[0] == "['petals', 'searched'] 30 [1]"
    assert "120" in text(outputs[-1])
