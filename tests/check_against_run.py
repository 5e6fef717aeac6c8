"""``sqlml check`` compared with ``sqlml run``: a check reports no error where the run
succeeds. The example and tutorial tests check each program right before they run it, and
compare: the errors found (without a datasource and with the run's, in its dialect) must all
be in statements the run did not pass."""

from __future__ import annotations

import bisect
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from sqlml.checking import check_program, errors_of
from sqlml.datasources import connect, dialect_of
from sqlml.errors import SqlmlError
from sqlml.grammar import parse
from sqlml.semantics import analyze


def programs_run(script: str) -> list[str]:
    """The program files a shell script runs with ``sqlml run FILE...``, in order."""
    found = re.findall(r"\bsqlml run((?:\s+[\w/.-]+\.sql)+)", script)
    return [name for names in found for name in names.split()]


def check_errors(program: Path, url: str) -> list[SqlmlError]:
    """The errors ``sqlml check`` finds in ``program`` in ``url``'s dialect: of its text,
    then against ``url`` (relative paths in it read from its folder, as a run reads them)."""
    text, dialect = program.read_text(), dialect_of(url)
    found = errors_of(check_program(text, dialect))
    datasource = connect(url, program.parent)
    try:
        found += errors_of(check_program(text, dialect, datasource))
    finally:
        datasource.close()
    return found


def unpassed_in_report(report: Path, program: Path, dialect: str) -> set[int] | None:
    """The first lines of ``program``'s statements that its run (its JUnit ``report``) did
    not pass; None if it ran none (the program was refused whole)."""
    cases = list(ET.parse(report).getroot().iter("testcase"))
    if not cases or not re.match(r"s\d+-", cases[0].get("name", "")):
        return None
    statements = analyze(parse(program.read_text()), dialect)
    lines = {statement.id: statement.line for statement in statements}
    passed = {c.get("name").split(":")[0] for c in cases if not _failed(c)}
    return {line for step, line in lines.items() if step not in passed}


def _failed(case: ET.Element) -> bool:
    """Whether a testcase did not pass: a child with a message, but a warning's failure."""
    return any(child.get("type") != "warning" for child in case.findall("*[@message]"))


def failed_in_output(output: str, program: Path) -> set[int]:
    """The first lines of ``program``'s statements whose errors a run printed in ``output``."""
    printed = re.findall(rf"^{re.escape(program.name)}:(\d+):\d+: error:", output, re.MULTILINE)
    starts = statement_starts(program)
    return {starts[bisect.bisect_right(starts, int(line)) - 1] for line in printed}


def statement_starts(program: Path) -> list[int]:
    return [statement.pos.line for statement in parse(program.read_text()).statements]


def false_errors(found: list[SqlmlError], program: Path, unpassed: set[int] | None) -> list[str]:
    """The errors of ``found`` in statements of ``program`` that the run passed (none where
    the run refused the program whole: it found them too)."""
    if unpassed is None:
        return []
    starts = statement_starts(program)
    return [
        error.render(program.name)
        for error in found
        if starts[max(bisect.bisect_right(starts, error.line or 1) - 1, 0)] not in unpassed
    ]
