"""sqlml: train and use machine-learning models with SQL.

Importing this package is cheap: it loads neither TensorFlow nor XGBoost, nor the REPL.
"""

from importlib import import_module

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext sqlml``: register the ``%sqlml`` and ``%%sqlml`` magics (the REPL layer is
    imported by name, when IPython asks, so this package does not depend on it)."""
    import_module("sqlml.repl.magic").load_ipython_extension(ipython)
