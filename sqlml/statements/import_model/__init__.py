"""TO IMPORT: a model trained elsewhere, read from a file in a format that loads without
running code, checked against the columns of a SELECT and stored as a new version."""

from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="import_model",
        ir=f"{__name__}.ir:ImportModelStatement",
        syntax=f"{__name__}.syntax:ImportModelNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("IMPORT",),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:IMPORT_ATTRIBUTES",
        step="statement",
        handler=f"{__name__}.handler:import_model",
        effects=Effects(queries=("select",), writes_models=("model",), reads_files=("file",)),
        completion=Completion(after={"INTO": "model"}),
    ),
)
