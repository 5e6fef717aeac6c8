"""TensorFlow's start-up logs stay out of standard error unless ``SQLML_VERBOSE`` asks for them."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sqlml.models.keras.library import VERBOSE_ENV, _stderr_without_logs

# What TensorFlow writes when it is not quiet: its C++ libraries' lines (absl's format) and
# the Python warnings of its "tensorflow" logger.
TENSORFLOW_LINE = re.compile(
    r"^[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\]|absl::|oneDNN|cuInit|cuda|retracing|tensorflow",
    re.MULTILINE | re.IGNORECASE,
)

# Skipped without TensorFlow, which is not imported here: it would log in this process.
needs_tensorflow = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="needs the tensorflow extra"
)

PROGRAM = """
CREATE TABLE points AS SELECT i AS x, i % 7 AS z, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS y
FROM range(60) AS r(i);
SELECT * FROM points TO TRAIN DNNClassifier
WITH model.hidden_units = [4], train.epoch = 1, train.batch_size = 16 LABEL y INTO m;
SELECT * FROM points TO PREDICT scored.y USING m;
"""


def _environment(**settings: str) -> dict[str, str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in (VERBOSE_ENV, "TF_CPP_MIN_LOG_LEVEL")
    }
    return environment | settings


@pytest.mark.keras
@needs_tensorflow
def test_a_keras_training_and_prediction_write_no_tensorflow_logs(tmp_path: Path):
    program = tmp_path / "program.sql"
    program.write_text(PROGRAM)
    done = subprocess.run(
        [sys.executable, "-m", "sqlml", "run", str(program),
         "--datasource", f"duckdb:///{tmp_path / 'data.duckdb'}", "--jobs", "1"],
        capture_output=True, text=True, env=_environment(), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "predicted 60 rows into scored.y with m" in done.stdout + done.stderr
    assert TENSORFLOW_LINE.search(done.stderr) is None, done.stderr


@pytest.mark.keras
@needs_tensorflow
def test_sqlml_verbose_keeps_tensorflow_logs():
    code = "from sqlml.models.keras import library; library.keras()"
    quiet, loud = (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
        )
        for env in (_environment(), _environment(**{VERBOSE_ENV: "1"}))
    )
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert TENSORFLOW_LINE.search(quiet.stderr) is None, quiet.stderr
    assert TENSORFLOW_LINE.search(loud.stderr), loud.stderr


LOG = b"I0000 00:00:1795653296.680274   31459 port.cc:153] oneDNN custom operations are on.\n"


def test_the_import_window_drops_log_lines_and_keeps_other_output(capfd):
    with _stderr_without_logs():
        os.write(2, b"WARNING: All log messages before absl::InitializeLog() are written\n")
        os.write(2, LOG + b"another step: 40% done\n")
        os.write(2, b"E0000 00:00:1795653135.900259   20910 cuda_platform.cc:52] cuInit\n")
    assert capfd.readouterr().err == "another step: 40% done\n"


def test_a_failed_import_shows_everything_it_wrote(capfd):
    with pytest.raises(ImportError), _stderr_without_logs():
        os.write(2, LOG)
        raise ImportError("no tensorflow")
    assert capfd.readouterr().err == LOG.decode()
