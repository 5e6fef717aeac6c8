"""Code generation: IR statements to a workflow value or a Python workflow program."""

from sqlml.codegen.python import to_python
from sqlml.codegen.workflow import to_workflow

__all__ = ["to_python", "to_workflow"]
