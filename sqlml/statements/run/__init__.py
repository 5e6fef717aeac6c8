"""TO RUN: a user's program (a Python function, a script or an image) run on the rows of a
SELECT in a child process; what it writes comes back into the INTO tables."""

from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="run",
        ir=f"{__name__}.ir:RunStatement",
        syntax=f"{__name__}.syntax:RunNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("RUN",),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:RUN_ATTRIBUTES",
        step="statement",
        handler=f"{__name__}.handler:run",
        effects=Effects(
            queries=("select",),
            writes_tables=("tables[]",),
            replace="attributes.output.replace",
        ),
        completion=Completion(after={"INTO": "table"}),
    ),
)
