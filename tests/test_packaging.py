"""The wheel a user installs holds every file sqlml reads besides its modules: the grammar
fragments, the web page's templates and scripts, each backend's templates."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_every_data_file(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    [wheel] = tmp_path.glob("sqlml-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    wanted = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "sqlml").rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }
    assert len(wanted) > 20
    assert sorted(wanted - packed) == []
