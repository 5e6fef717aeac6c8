"""The one registry mechanism (sqlml.plugins): the built-in entries in their order, entry
points of installed packages, clashes and broken plugins refused with a clear error, and a
start-up that pays nothing for a mechanism no plugin uses."""

from __future__ import annotations

import pytest
from plugin_env import PLUGINS, PluginEnv

from sqlml.plugins import BACKENDS, DATASOURCES, FAMILIES, KINDS, Registry

PROGRAM = """
CREATE TABLE points AS SELECT range AS x, range % 2 AS y FROM range(20);
SELECT x, y FROM points TO TRAIN XGBoostClassifier WITH objective = "binary:logistic"
  COLUMN x LABEL y INTO m;
"""


def test_built_in_entries_come_first_in_their_order():
    assert list(FAMILIES)[:7] == [
        "xgboost", "keras", "cluster", "outlier", "timeseries", "graph", "sklearn",
    ]  # fmt: skip
    assert list(BACKENDS)[:2] == ["local", "argo"]
    assert list(DATASOURCES)[:4] == ["duckdb", "mysql", "sqlite", "postgresql"]
    assert {"train", "predict", "evaluate", "explain", "sql"} <= set(KINDS)
    assert all(FAMILIES.built_in(name) for name in list(FAMILIES)[:7])


def test_claims_are_found_and_refused_twice():
    assert DATASOURCES.claimant("postgres") is DATASOURCES["postgresql"]
    assert BACKENDS.claimant("target argo") is BACKENDS["argo"]

    class Clash:
        name = "clash"
        format = "json"
        extensions = ("json",)

        def estimators(self):
            return list(FAMILIES["xgboost"].estimators())[:1]

    with pytest.raises(ValueError, match="already declared by 'xgboost'"):
        FAMILIES.register(Clash())
    assert "clash" not in FAMILIES
    with pytest.raises(ValueError, match="built-in model family"):
        FAMILIES.unregister("xgboost")


def test_an_entry_lacking_what_it_must_set_is_refused():
    registry: Registry[object] = Registry("thing", "sqlml.things", "backends", "backend:BACKEND")

    class Nameless:
        name = ""

    with pytest.raises(TypeError, match="thing Nameless sets no name"):
        registry.register(Nameless())


def test_a_plugin_that_fails_to_load_is_one_clear_error(tmp_path):
    env = PluginEnv.create(tmp_path / "env", PLUGINS / "sqlml_broken_plugin")
    (tmp_path / "train.sql").write_text(PROGRAM)
    result = env.sqlml("check", "train.sql", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "entry point 'broken' of the package sqlml-broken-plugin" in result.stderr
    assert "(sqlml_broken_plugin:NO_SUCH_FAMILY) cannot be loaded: AttributeError" in result.stderr
    assert "fix or uninstall that package" in result.stderr
    assert "Traceback" not in result.stderr
    plain = env.sqlml("-e", "SELECT 42 AS answer", cwd=tmp_path)  # reads no family
    assert (plain.returncode, plain.stdout.split()[:3]) == (0, ["answer", "--------", "42"])


def test_a_plugin_whose_name_is_taken_is_one_clear_error(tmp_path):
    env = PluginEnv.create(tmp_path / "env", PLUGINS / "sqlml_clashing_plugin")
    result = env.sqlml("-e", "SELECT 1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "entry point 'clashing' of the package sqlml-clashing-plugin" in result.stderr
    assert "a backend called 'local' is already registered" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_plugins_no_entry_point_is_read(tmp_path):
    env = PluginEnv.create(tmp_path / "env")
    script = (
        "import sys; from sqlml.plugins import KINDS, BACKENDS;"
        "list(KINDS); list(BACKENDS); print('importlib.metadata' in sys.modules)"
    )
    result = env.run("-c", script, cwd=tmp_path)
    assert result.stdout.strip() == "False", result.stderr


def test_the_metadata_scan_finds_declared_groups(tmp_path):
    env = PluginEnv.create(
        tmp_path / "env", PLUGINS / "sqlml_broken_plugin", PLUGINS / "sqlml_clashing_plugin"
    )
    result = env.run(
        "-c", "from sqlml import plugins; print(sorted(plugins._declared_groups()))", cwd=tmp_path
    )
    assert result.stdout.strip() == "['sqlml.backends', 'sqlml.families']", result.stderr
