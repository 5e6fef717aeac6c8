"""Steps running side by side import TensorFlow, XGBoost, scikit-learn and SciPy while other
steps read: no step ever sees a module another thread is still importing
(:mod:`sqlml.imports`).

The end-to-end runs widen the window in which a module is half made: a ``sitecustomize``
slows the import of one module that several libraries import (numpy.ma, which DuckDB's reads
also use; scipy.sparse; pandas) by a second, in a fresh ``sqlml run`` each time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fetch_rows

from sqlml import imports
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

SLOW_IMPORT = """
import importlib.abc, importlib.util, os, sys, time

class _Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != os.environ["SLOW_IMPORT"]:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        run = spec.loader.exec_module
        def exec_module(module):
            time.sleep(1.0)  # in sys.modules, empty
            run(module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Slow())
"""

DATA = """
CREATE TABLE readings AS
SELECT i AS n, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.5 END AS x,
       CASE WHEN i % 5 = 0 THEN NULL ELSE (i % 3)::DOUBLE END AS y, i % 2 AS label
FROM range(2000) t(i);
CREATE TABLE woodcarving AS
SELECT * FROM (VALUES ('soldier', 27.0, 10.0, 14.0, 2.0, 1.0, 40.0),
                      ('train', 21.0, 9.0, 10.0, 1.0, 1.0, 10000.0))
  AS t(product, price, materials_cost, other_cost, finishing, carpentry, max_num);
"""

READERS = 24  # k-means trainings (numpy only): each reads the table with NULLs
PARALLEL = """
SELECT coalesce(x, 0) AS x, coalesce(y, 0) AS y, label FROM readings TO TRAIN DNNClassifier
WITH model.n_classes = 2, model.hidden_units = [4], train.epoch = 1, train.batch_size = 256
LABEL label INTO m_dnn;
SELECT x, y, label FROM readings TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", train.num_boost_round = 2 LABEL label INTO m_xgb;
SELECT x, y, label FROM readings TO TRAIN sklearn.ensemble.RandomForestClassifier
WITH model.n_estimators = 2 LABEL label INTO m_forest;
SELECT * FROM woodcarving
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100, SUM(carpentry * amount) <= 80, amount <= max_num
WITH variables = "amount(product)", var_type = "NonNegativeIntegers"
INTO plan;
""" + "".join(
    f"SELECT x, y, n FROM readings WHERE n % {READERS} <> {i} TO TRAIN KMeans\n"
    f"WITH model.n_clusters = 2, model.n_init = 1, model.max_iter = 5 INTO k{i};\n"
    for i in range(READERS)
)


@pytest.mark.parametrize("slowed", ["numpy.ma", "scipy.sparse", "pandas"])
def test_steps_importing_libraries_beside_steps_that_read(tmp_path: Path, slowed: str):
    url = f"duckdb:///{tmp_path / 'runs.duckdb'}"
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "sitecustomize.py").write_text(SLOW_IMPORT)
    (tmp_path / "data.sql").write_text(DATA)
    (tmp_path / "parallel.sql").write_text(PARALLEL)
    env = {
        **os.environ,
        "SQLML_CACHE": "off",  # every training reads the database
        "SQLML_CACHE_DIR": str(tmp_path / "cache"),
        "SQLML_RUN_DIR": str(tmp_path / "runs"),
    }

    def sqlml_run(program: str, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sqlml", "run", program, "--datasource", url, "--jobs", "8"],
            cwd=tmp_path, env={**env, **more}, capture_output=True, text=True, timeout=900,
        )  # fmt: skip

    assert sqlml_run("data.sql").returncode == 0

    done = sqlml_run("parallel.sql", PYTHONPATH=str(tmp_path / "slow"), SLOW_IMPORT=slowed)

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "error" not in done.stderr
    assert f"PASS={READERS + 4} WARN=0 FAIL=0 ERROR=0" in done.stderr
    store = ModelStore(connect(url))
    trained = {name for name, _, _ in store.catalog()}
    assert trained == {"m_dnn", "m_xgb", "m_forest", *(f"k{i}" for i in range(READERS))}
    plan = fetch_rows(url, "SELECT product, amount FROM plan ORDER BY product")
    assert plan == [("soldier", 20), ("train", 60)]


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A folder of modules on the path, and ``sync``: events those modules wait on. The
    modules written there are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    sync = types.ModuleType("sync")
    monkeypatch.setitem(sys.modules, "sync", sync)
    yield sync
    for name in [name for name in sys.modules if name.startswith("cyclic_")]:
        del sys.modules[name]


def test_modules_that_import_each_other_from_two_threads(tmp_path: Path, modules):
    """Each thread starts one of two modules that import each other. Imported at once, the
    first to need the other's module would get it half made (Python breaks the deadlock so)
    and fail; through :func:`imports.load` they are imported one at a time."""
    modules.a, modules.b = threading.Event(), threading.Event()
    # Together: b waits for a's module, then a for b's, which Python hands it half made.
    (tmp_path / "cyclic_a.py").write_text(
        "import sync, time\nsync.a.set()\nsync.b.wait(2)\ntime.sleep(0.5)\n"
        "import cyclic_b\nA = cyclic_b.B + 1\n"
    )
    (tmp_path / "cyclic_b.py").write_text("import sync\nsync.b.set()\nimport cyclic_a\nB = 1\n")
    errors: list[BaseException] = []

    def load(name: str) -> None:
        try:
            imports.load(name)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=load, args=[name]) for name in ("cyclic_a", "cyclic_b")]
    threads[0].start()
    modules.a.wait()
    threads[1].start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sys.modules["cyclic_a"].A == 2


def test_a_module_another_thread_is_importing_is_waited_for(tmp_path: Path, modules):
    modules.started, modules.go = threading.Event(), threading.Event()
    slow = "import sync\nsync.started.set()\nsync.go.wait()\nX = 1\n"
    (tmp_path / "cyclic_slow.py").write_text(slow)
    importer = threading.Thread(target=imports.load, args=["cyclic_slow"])
    importer.start()
    modules.started.wait()
    seen: list[bool] = []

    def ask() -> None:
        seen.append(hasattr(imports.loaded("cyclic_slow"), "X"))

    asker = threading.Thread(target=ask)
    asker.start()
    threading.Timer(0.5, modules.go.set).start()  # the asker, if it did not wait, has looked
    asker.join()
    importer.join()

    assert seen == [True]
    assert imports.loaded("cyclic_never_imported") is None
    assert "cyclic_never_imported" not in sys.modules


def test_a_package_hidden_from_one_module_while_it_loads(
    tmp_path: Path, modules, monkeypatch: pytest.MonkeyPatch
):
    """In sqlml's own process, the module told so sees a package not imported yet as absent;
    another module the same import loads, and another thread importing meanwhile, get it; so
    does the module once the package is imported; afterwards it imports as usual. In a
    process of the user's, nothing is hidden."""
    modules.hiding, modules.go = threading.Event(), threading.Event()
    (tmp_path / "cyclic_extra").mkdir()
    (tmp_path / "cyclic_extra" / "__init__.py").write_text("")
    (tmp_path / "cyclic_extra" / "part.py").write_text("X = 1\n")
    (tmp_path / "cyclic_more.py").write_text("")
    (tmp_path / "cyclic_lib.py").write_text(
        "import sync, cyclic_other, cyclic_compat\nsync.hiding.set()\nsync.go.wait()\n"
    )
    (tmp_path / "cyclic_compat.py").write_text(
        f"{_FOUND.format('cyclic_extra.part')}{_FOUND.format('cyclic_more')}"
    )
    (tmp_path / "cyclic_other.py").write_text(_FOUND.format("cyclic_more"))
    (tmp_path / "cyclic_elsewhere.py").write_text(_FOUND.format("cyclic_extra.part"))
    (tmp_path / "cyclic_unhidden.py").write_text(_FOUND.format("cyclic_solo"))
    (tmp_path / "cyclic_solo.py").write_text("")
    meta_path = list(sys.meta_path)
    monkeypatch.setattr(imports, "_hiding", False)  # a process of the user's
    imports.load("cyclic_unhidden", {"cyclic_unhidden": ("cyclic_solo",)})
    monkeypatch.setattr(imports, "_hiding", True)  # sqlml's own (imports.hide_unused)

    def elsewhere() -> None:  # another thread, while the hiding is on
        modules.hiding.wait()
        import cyclic_elsewhere  # noqa: F401

        modules.go.set()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    lib = imports.load("cyclic_lib", {"cyclic_compat": ("cyclic_extra", "cyclic_more")})
    thread.join()

    names = ("unhidden", "compat", "other", "elsewhere")
    found = {name: sys.modules[f"cyclic_{name}"].FOUND for name in names}
    assert found == {
        "unhidden": {"cyclic_solo": True},
        "compat": {"cyclic_extra.part": False, "cyclic_more": True},  # imported by cyclic_other
        "other": {"cyclic_more": True},
        "elsewhere": {"cyclic_extra.part": True},
    }
    assert sys.meta_path == meta_path and lib is sys.modules["cyclic_lib"]
    assert imports.load("cyclic_extra.part").X == 1


# A module's import of an optional package, recorded in its FOUND.
_FOUND = """
FOUND = globals().get("FOUND", {{}})
try:
    import {0}
    FOUND["{0}"] = True
except ImportError:
    FOUND["{0}"] = False
"""
