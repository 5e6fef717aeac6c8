"""Couler-style workflows built as explicit values, and the backends that run them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from sqlml.output import FORMATS
from sqlml.workflow.core import Step, Workflow


def main(workflow: Workflow, base_dir: str = ".", argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of a compiled workflow program."""
    parser = argparse.ArgumentParser(description=f"Run the sqlml workflow {workflow.name}.")
    parser.add_argument("--datasource", help="database URL (default: $SQLML_DATASOURCE)")
    parser.add_argument("--backend", choices=["local"], default="local")
    parser.add_argument("--base-dir", default=base_dir, help="where relative file paths resolve")
    parser.add_argument("--format", choices=FORMATS, default="table")
    args = parser.parse_args(argv)
    from sqlml.workflow.report import run_and_report

    return run_and_report(workflow, args.datasource, Path(args.base_dir), args.format)


__all__ = ["Step", "Workflow", "main"]
