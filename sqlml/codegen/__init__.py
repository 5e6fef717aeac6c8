"""Code generation shared by the backends: IR statements to a workflow value (the step zoo's
steps in the plan's order). Each backend renders that value its own way (``sqlml.backends``)."""

from sqlml.codegen.workflow import to_workflow

__all__ = ["to_workflow"]
