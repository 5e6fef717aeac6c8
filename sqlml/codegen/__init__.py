"""Code generation: IR statements to a workflow value, a Python workflow program or an Argo
Workflow."""

from sqlml.codegen.argo import ArgoOptions, to_argo_yaml
from sqlml.codegen.python import to_python
from sqlml.codegen.workflow import to_workflow

__all__ = ["ArgoOptions", "to_argo_yaml", "to_python", "to_workflow"]
