"""Keras trains in one process (issue 31, item 5): a TFJob's replicas would each train the
whole model on every row and save a version, so distributing it is refused when the program
is checked, and SQLFlow's worker counts are not applied."""

from __future__ import annotations

import pytest

from sqlml.cli import main

TRAIN = "SELECT x, y FROM t TO TRAIN DNNRegressor WITH {attributes} LABEL y INTO m;\n"


@pytest.mark.parametrize("command", [["check"], ["compile", "--target", "argo"]])
def test_distributed_keras_is_refused_at_check_and_compile(command, tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text(TRAIN.format(attributes="train.distributed = true, train.workers = 12"))
    assert main([*command, str(program)]) == 1
    err = capsys.readouterr().err
    assert f"{program}:1:47: error: DNNRegressor (keras models) trains in one process" in err
    assert "hint: remove train.distributed" in err


def test_keras_worker_counts_are_not_applied(tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text(TRAIN.format(attributes="train.workers = 13, train.num_ps = 2"))
    out = tmp_path / "p.yaml"
    assert main(["compile", str(program), "--target", "argo", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{program}:1:47: warning: DNNRegressor (keras models) trains in one process" in err
    assert "train.workers is not applied" in err and "train.num_ps is not applied" in err
    text = out.read_text()
    assert "TFJob" not in text and "template: train" in text  # the step's own pod
