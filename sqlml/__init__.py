"""sqlml: train and use machine-learning models with SQL.

Importing this package is cheap: it loads neither TensorFlow nor XGBoost.
"""

__version__ = "0.1.0"
