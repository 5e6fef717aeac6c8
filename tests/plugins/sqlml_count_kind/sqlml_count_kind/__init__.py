"""``<select> TO COUNT USING <column> INTO <table>``: each distinct value of a column and the
number of rows holding it, written into a table. A statement kind from outside sqlml, laid
out as a built-in kind's folder is: its rule (``grammar.lark``), AST node and builder
(``syntax.py``), IR class (``ir.py``), analysis (``analysis.py``) and handler
(``handler.py``), declared here and found by sqlml through the entry point of the group
``sqlml.statements`` that names :data:`KINDS`."""

from sqlml.statements import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="count",
        ir=f"{__name__}.ir:CountStatement",
        syntax=f"{__name__}.syntax:CountNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("COUNT",),
        analysis=f"{__name__}.analysis:lower",
        step="statement",
        handler=f"{__name__}.handler:count",
        effects=Effects(queries=("select",), writes_tables=("table",)),
        completion=Completion(after={"INTO": "table"}),
    ),
)
