"""Checking a program that names a user's model builder reads the builder's module and never
runs it: neither the module nor the packages holding it are imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sqlml.cli import main
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.semantics import analyze

PREFIX = "SELECT * FROM t TO TRAIN "
MODULE = """\
import pathlib
pathlib.Path(__file__).with_name("ran").write_text("the module ran")
from keras import layers as imported_layers
from os import path as alias_target

BUILD_COUNT = 3
class NotABuilder: ...
shortcut = lambda features, n_outputs, attributes: features
made = imported_layers.Dense(3)
try:
    def fallback(features, n_outputs, attributes): ...
except ImportError:
    pass

def build(features, n_outputs, attributes):
    return features
"""


@pytest.fixture
def models(tmp_path, monkeypatch) -> Path:
    """A package ``mine`` whose ``__init__`` and module ``nets`` write ``ran`` when run."""
    package = tmp_path / "mine"
    package.mkdir()
    (package / "__init__.py").write_text(
        'import pathlib\npathlib.Path(__file__).with_name("ran").write_text("init ran")\n'
    )
    (package / "nets.py").write_text(MODULE)
    (tmp_path / "broken.py").write_text("def build(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in ("mine", "mine.nets", "broken"):
        sys.modules.pop(name, None)


def check(estimator: str):
    return analyze(parse(f"{PREFIX}{estimator} LABEL y INTO m;"))[0]


@pytest.mark.parametrize("function", ["build", "shortcut", "made", "alias_target", "fallback"])
def test_a_builder_is_accepted_without_running_its_module(models, function):
    statement = check(f"mine.nets.{function}")
    assert statement.attributes["builder"] == f"mine.nets.{function}"
    assert not (models / "ran").exists()
    assert "mine" not in sys.modules and "mine.nets" not in sys.modules


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        ("mine.nets.BUILD_COUNT", "it names an object of type int, not a function"),
        ("mine.nets.NotABuilder", "it names an object of type type, not a function"),
        ("mine.nets.missing", "unknown estimator mine.nets.missing"),
        ("mine.absent.build", "unknown estimator mine.absent.build"),
        ("broken.build", "reading its module failed: SyntaxError"),
    ],
)
def test_what_is_no_builder_is_an_error_at_its_name(models, estimator, message):
    with pytest.raises(CheckError) as caught:
        check(estimator)
    assert message in caught.value.message
    assert (caught.value.line, caught.value.column) == (1, len(PREFIX) + 1)
    assert not (models / "ran").exists()


def test_sqlml_check_does_not_run_the_builder_module(models, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    program = tmp_path / "p.sql"
    program.write_text(
        f"CREATE TABLE t AS SELECT 1.0 AS x, 2.0 AS y;\n{PREFIX}mine.nets.build LABEL y INTO m;\n"
    )
    assert main(["check", str(program), "--datasource", f"duckdb:///{tmp_path / 'db'}"]) == 0
    assert not (models / "ran").exists()
