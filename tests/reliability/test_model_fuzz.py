"""Structural fuzzing of stored models: thousands of mutants of XGBoost, scikit-learn and
Keras models (``fuzz/model_mutants.py``) are each loaded and used as sqlml does, and each
is used or refused with a SqlmlError: never a signal, never another exception, never an
allocation XGBoost cannot make.

The mutants run in one child process under a 4 GiB address-space limit (Keras's: none,
TensorFlow reserves more): a crash fails the test with the mutant that caused it.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"


def fuzz(tmp_path: Path, families: str, seed: int, mutants: int, limit: bool) -> dict:
    """The report of ``mutants`` mutants of ``families``' seed models; the test fails if
    the child process does not end normally, showing the mutant it was loading."""
    last = tmp_path / "last-mutant.json"

    def limited() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    done = subprocess.run(
        [
            *(sys.executable, str(FUZZ / "model_mutants.py"), "--seed", str(seed)),
            *("--mutants", str(mutants), "--families", families, "--last", str(last)),
        ],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=900,  # a guard: a mutant that loops forever fails the test
    )
    if done.returncode != 0:
        mutant = json.loads(last.read_text()) if last.exists() else {}
        pytest.fail(
            f"the fuzzing process ended with status {done.returncode} (negative: a signal) "
            f"on the mutant of {mutant.get('seed')}: {mutant.get('change')}\n"
            f"its bytes: {last}\n{done.stderr[-3000:]}"
        )
    return json.loads(done.stdout.splitlines()[-1])


def check(report: dict) -> None:
    assert not report["unexpected"], json.dumps(report["unexpected"][:5], indent=2)
    memory = [reason for reason in report["reasons"] if "alloc" in reason or "Memory" in reason]
    assert not memory, {reason: report["examples"][reason] for reason in memory}
    outcomes = report["outcomes"]
    assert outcomes.get("used", 0) > 0 and outcomes.get("refused", 0) > 0, outcomes


def test_xgboost_and_scikit_learn_mutants_are_used_or_refused(tmp_path):
    report = fuzz(tmp_path, "xgboost,sklearn", seed=0, mutants=3000, limit=True)
    check(report)
    assert sum(report["outcomes"].values()) == 3000


@pytest.mark.keras
def test_keras_mutants_are_used_or_refused(tmp_path):
    pytest.importorskip("keras")
    check(fuzz(tmp_path, "keras", seed=0, mutants=60, limit=False))


def test_an_archive_of_a_zip_version_python_cannot_read_is_refused():
    """Found by the fuzzer: zipfile raised NotImplementedError for such an archive."""
    from sqlml.errors import ModelError
    from sqlml.models.keras.checks import keras_archive
    from sqlml.models.sklearn.checks import skops_archive

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("schema.json", b"{}")
    data = bytearray(out.getvalue())
    data[data.find(b"PK\x01\x02") + 6] = 187  # the version needed to extract: 18.7
    for check in (skops_archive, keras_archive):
        with pytest.raises(ModelError, match="damaged or cut-short"):
            check(bytes(data))
