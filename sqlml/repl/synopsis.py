"""``\\h``: the forms of sqlml's statements, read from the statement kinds' declarations."""

from __future__ import annotations

from sqlml.statements import KINDS


def synopses() -> list[str]:
    """A line per form: ``SELECT ... TO TRAIN ... [WITH ...] [LABEL ...]...``, ``DROP MODEL
    <model>``..., in the order the kinds are declared."""
    forms: list[str] = []
    for kind in KINDS.values():
        grammar = kind.grammar
        if grammar is not None and grammar.clauses:
            sections = " ".join(f"[{section} ...]" for section in grammar.sections)
            forms += [f"SELECT ... TO {clause} ... {sections}" for clause in grammar.clauses]
        elif kind.completion.models_after:
            forms += [f"{' '.join(words)} <model> ..." for words in kind.completion.models_after]
        elif grammar is not None:  # a statement its name says (ASSERT, SHOW MODELS)
            forms.append(f"{kind.name.replace('_', ' ').upper()} ...")
    return list(dict.fromkeys(forms))
