"""A fresh Python environment for the plugin tests: a virtual environment that sees the sqlml
under test and the libraries of the environment running the tests, into which plugin
packages (folders under ``tests/plugins/``) are pip-installed, offline, as a user would
install them. sqlml then runs in it as a new process, ``python -m sqlml``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import sqlml

PLUGINS = Path(__file__).resolve().parent / "plugins"
SOURCE = Path(sqlml.__file__).resolve().parent.parent  # the checkout holding the sqlml under test
# A safety net against a hung child, far above any run here (tests wait for the process).
_LIMIT = 900


@dataclass(frozen=True)
class PluginEnv:
    """A virtual environment with plugin packages installed."""

    python: Path

    @classmethod
    def create(cls, where: Path, *packages: Path) -> PluginEnv:
        """A new environment in ``where`` with ``packages`` (folders) pip-installed."""
        venv.create(where, with_pip=False, symlinks=os.name != "nt")
        python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        site = Path(
            subprocess.run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()
        )  # fmt: skip
        # The sqlml under test first, then this environment's libraries (and their .pth files).
        outer = sysconfig.get_paths()["purelib"]
        (site / "_sqlml_under_test.pth").write_text(
            f"{SOURCE}\nimport site; site.addsitedir({outer!r})\n", encoding="utf-8"
        )
        env = cls(python)
        for package in packages:  # built from a copy: a build leaves files beside its sources
            copy = shutil.copytree(package, where / "sources" / package.name)
            env.pip("install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                    str(copy))  # fmt: skip
        return env

    def pip(self, *args: str) -> None:
        """Run pip in the environment (a :class:`subprocess.CalledProcessError` on failure)."""
        subprocess.run(
            [self.python, "-m", "pip", "--disable-pip-version-check", *args],
            capture_output=True, text=True, check=True, timeout=_LIMIT,
        )  # fmt: skip

    def sqlml(
        self, *args: str, cwd: Path, env: dict[str, str] | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``python -m sqlml ARGS`` in the environment, a new process; its exit status, output
        and errors (text)."""
        return self.run("-m", "sqlml", *args, cwd=cwd, env=env, input=input)

    def run(
        self, *args: str, cwd: Path, env: dict[str, str] | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` in the environment, a new process."""
        variables = {**os.environ, "PYTHONPATH": "", **(env or {})}
        return subprocess.run(
            [self.python, *args], cwd=cwd, env=variables, input=input,
            capture_output=True, text=True, timeout=_LIMIT,
        )  # fmt: skip
