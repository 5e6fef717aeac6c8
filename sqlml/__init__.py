"""sqlml: train and use machine-learning models with SQL.

Importing this package is cheap: it loads neither TensorFlow nor XGBoost.
"""

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext sqlml``: register the ``%sqlml`` and ``%%sqlml`` magics."""
    from sqlml.repl.magic import load_ipython_extension as load

    load(ipython)
