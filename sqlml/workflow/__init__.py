"""Couler-style workflows built as explicit values (the backends in ``sqlml.backends`` run them)."""

from __future__ import annotations

from sqlml.workflow.core import (
    ArtifactInput,
    Condition,
    Ref,
    Resources,
    Retry,
    Secret,
    Step,
    Volume,
    Workflow,
    WorkflowError,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    names,
    not_equal,
)
from sqlml.workflow.prerequisites import Prerequisite, fetch_data, packages, script
from sqlml.workflow.templates import run_container, run_job, run_script

__all__ = [
    "ArtifactInput",
    "Condition",
    "Prerequisite",
    "Ref",
    "Resources",
    "Retry",
    "Secret",
    "Step",
    "Volume",
    "Workflow",
    "WorkflowError",
    "equal",
    "fetch_data",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "names",
    "not_equal",
    "packages",
    "run_container",
    "run_job",
    "run_script",
    "script",
]
