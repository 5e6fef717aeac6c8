"""TO MAXIMIZE / TO MINIMIZE: a linear or mixed-integer program over the rows of a SELECT,
solved with HiGHS; the rows and the solution into a table."""

from sqlml.statements.kind import Completion, Effects, StatementKind
from sqlml.statements.optimize.ir import SOLVERS

KINDS = (
    StatementKind(
        name="optimize",
        ir=f"{__name__}.ir:OptimizeStatement",
        syntax=f"{__name__}.syntax:OptimizeNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("MAXIMIZE", "MINIMIZE"),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:OPTIMIZE_ATTRIBUTES",
        step="statement",
        handler=f"{__name__}.handler:optimize",
        effects=Effects(
            queries=("select",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
        completion=Completion(after={"USING": ("solver", SOLVERS), "INTO": "table"}),
    ),
)
