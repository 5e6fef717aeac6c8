"""Keras at the edges of a shell session: what the first statement waits for is said, Ctrl-C
while TensorFlow loads says why it waits, the network's compilation is a stage of its own,
and quitting after a training skips the interpreter's slow shutdown without losing a write.
Driven in a real pseudo-terminal (pexpect); how long each takes is measured in
``benchmarks/shell_edges.py``."""

from __future__ import annotations

import subprocess
import sys

import pexpect
import pytest

from tests.test_repl import CTRL_C, CTRL_D, GUARD, PROMPT

pytestmark = pytest.mark.keras


def training(model: str, epochs: int) -> str:
    return (
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 3, "
        f"model.hidden_units = [8], train.epoch = {epochs} LABEL class INTO {model};"
    )


def test_the_first_keras_statement_says_what_it_waits_for_and_quitting_keeps_every_write(
    progress_shell, unique_name, tmp_path
):
    pytest.importorskip("tensorflow")
    shell, model, written = progress_shell, f"{unique_name}_dnn", tmp_path / "out.txt"
    shell.child.send(training(model, 100000) + "\r")
    shell.expect(rf"loading TensorFlow \({model}\)\r\n")
    shell.child.send(CTRL_C)  # TensorFlow takes seconds to load: this comes meanwhile
    shell.expect(r"cancelling\.\.\. \(once TensorFlow has loaded, which cannot be interrupted\)")
    shell.expect(r"cancelled\r\n", timeout=GUARD)

    said = shell.run(training(model, 2), until=rf"trained {model} [^\n]*\n")
    assert "loading TensorFlow" not in said  # loaded once a process
    compiling, trained = said.index(f"compiling the network ({model})"), said.index("training (")
    assert compiling < trained
    assert f"training ({model}): 2/2 epochs" in said

    shell.run(f"\\o {written}", until=PROMPT)
    shell.run("SELECT 42 AS answer;", until=PROMPT)
    shell.child.send(CTRL_D)  # the process ends without the interpreter's shutdown
    shell.child.expect(pexpect.EOF, timeout=GUARD)
    shell.child.close()
    assert shell.child.exitstatus == 0
    assert "42" in written.read_text()  # what \o wrote is flushed, not lost with the process
    assert "SELECT 42 AS answer;" in (tmp_path / "history").read_text()


def test_a_command_that_loaded_tensorflow_keeps_its_output_and_status(iris_duckdb_url, unique_name):
    pytest.importorskip("tensorflow")
    program = training(f"{unique_name}_dnn", 1) + "SELECT 7 * 6 AS answer; SELECT * FROM nowhere;"
    command = [sys.executable, "-m", "sqlml", "--datasource", iris_duckdb_url, "--format", "csv"]
    ran = subprocess.run([*command, "-e", program], capture_output=True, text=True, timeout=GUARD)
    assert ran.returncode == 1  # the last statement failed
    assert ran.stdout.splitlines()[-2:] == ["answer", "42"]  # piped: flushed before the exit
    assert "nowhere" in ran.stderr
