"""The step zoo: functions that make workflow steps.

Each sqlml statement becomes one step whose parameters are the statement's IR, so the same
IR runs in-process (local backend) or in a container (``python -m sqlml.runtime.step``).
"""

from sqlml.steps.statements import predict, sql, train

__all__ = ["predict", "sql", "train"]
