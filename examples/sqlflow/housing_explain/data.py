"""SQL that recreates the boston housing tables: ``python data.py > data.sql``.

The tables of ``doc/tutorial/housing-explain.md`` are those of the XGBoost tutorial: this
prints ``../housing_xgboost/data.py``'s output (SYNTHETIC data; see its docstring).
"""

from __future__ import annotations

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(
        str(Path(__file__).resolve().parent.parent / "housing_xgboost" / "data.py"),
        run_name="__main__",
    )
