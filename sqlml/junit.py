"""JUnit XML reports of ``sqlml run`` and ``sqlml check``, for CI systems.

One ``testsuite`` per program file, one ``testcase`` per statement (named by its step id and
first line, ``classname`` and ``file`` the file, ``line`` the statement's, ``time`` from the
run record), as the run's verdict on it says (:class:`sqlml.backends.reports.Verdict`), its
message the diagnostic ``sqlml run`` printed: a failed statement is a ``failure``, a
cancelled one an ``error``, one not run because a statement it waits for failed (or an
earlier file failed) is ``skipped`` (the note saying why its text), and a program that does
not parse or check is one testcase with an ``error``. A failed ``ASSERT ... WARN`` (and a
check that finds warnings only) is a ``failure`` of ``type="warning"``, which CI systems list
where reviewers look, or (``warnings="passed"``) a passed testcase with the warning in its
``system-out``.

The report validates against the JUnit schema of Jenkins' xunit plugin (``junit-10.xsd``)
but for the testcases' ``file`` and ``line`` (GitLab and GitHub's test reporters read them);
the root ``testsuites`` carries no ``skipped`` count, the suites do.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import gmtime, strftime
from time import time as now
from typing import TYPE_CHECKING

from sqlml import ir
from sqlml.backends.reports import (
    PASSED,
    SKIPPED,
    RunReport,
    StepReport,
    Verdict,
    WriteResult,
)
from sqlml.errors import NotRun, SqlmlError, SqlmlWarning
from sqlml.statements.assertion.handler import warned

if TYPE_CHECKING:
    from sqlml.datasources import ResultSet

_NAME_CHARS = 120  # of a testcase name
_NOT_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# A statement the run has no verdict on: it ended before the statement's step did.
_UNFINISHED = Verdict(SKIPPED, NotRun("not run: the run ended before it"))


# The end-of-run summary's words for the outcomes, in its order (as dbt's ``PASS=3 ...``).
SUMMARY_WORDS = {
    "passed": "PASS",
    "warning": "WARN",
    "failure": "FAIL",
    "error": "ERROR",
    "skipped": "SKIP",
}


@dataclass
class Case:
    """One testcase: ``outcome`` is passed, warning (passed, with a warning), failure, error
    or skipped; ``statement`` its statement's id (empty for a whole file's), at ``line`` and
    ``column`` of the file ``classname``, which it started at ``started`` (epoch seconds)."""

    name: str
    classname: str
    time: float = 0.0
    outcome: str = "passed"
    message: str = ""
    details: str = ""
    statement: str = ""
    line: int = 1
    column: int = 1
    started: float | None = None


@dataclass
class Suite:
    """The testcases of one program file."""

    name: str
    cases: list[Case] = field(default_factory=list)
    time: float = 0.0
    timestamp: float = field(default_factory=now)

    def count(self, outcome: str) -> int:
        return sum(case.outcome == outcome for case in self.cases)


class JUnitReport:
    """The suites of one command, added file by file; :meth:`write` saves the XML."""

    def __init__(self, warnings: str = "failure") -> None:
        # How a warning is written: "failure" (of type warning) or "passed" (in system-out).
        self.warnings = warnings
        self.suites: list[Suite] = []
        # The rows of each result kept, by program and statement id (see ``counting``).
        self.rows: dict[tuple[str, str], int] = {}
        # The programs whose run gave no result: it did not start, or their backend
        # reports no statement's outcome.
        self.unreported: list[str] = []

    def add_error(self, source: str, error: SqlmlError, name: str = "parse and check") -> None:
        """A program that could not be read, parsed or checked: one testcase in error."""
        self.add_errors(source, [error], name)

    def add_errors(self, source: str, errors: Sequence[SqlmlError], name: str) -> None:
        """One testcase ``name``: passed without ``errors``, else an error naming the first
        (every one in its details); passed with a warning where they are all warnings
        (:class:`~sqlml.errors.SqlmlWarning`, in its ``system-out``)."""
        case = Case(name, source)
        rendered = [error.render(source) for error in errors]
        first = next((e for e in errors if not isinstance(e, SqlmlWarning)), None)
        if first is not None:
            case.outcome, case.message = "error", first.render(source)
            case.details = "\n".join(rendered)
        elif errors:
            case.outcome, case.message = "warning", "\n".join(rendered)
            first = errors[0]
        if first is not None and first.line is not None:
            case.line, case.column = first.line, first.column or 1
        self.suites.append(Suite(source, [case]))

    def add_run(
        self, source: str, statements: Sequence[ir.Statement], result: RunReport | None
    ) -> None:
        """The statements of a program as its run (``None``: it did not start) left them."""
        suite = Suite(source)
        if result is None:
            self.unreported.append(source)
            message = f"{source}: the run did not start; see the messages before this report"
            suite.cases.append(Case("run", source, outcome="error", message=message))
        records = result.steps if result is not None else {}
        verdicts = result.verdicts if result is not None else {}
        for statement in statements:
            verdict = verdicts.get(statement.id, _UNFINISHED)
            suite.cases.append(_case(source, statement, verdict, _own(statement, records)))
        times = [(r.started_at, r.ended_at) for r in records.values() if r.started_at]
        if times:
            suite.timestamp = min(start for start, _ in times)
            suite.time = max(end or start for start, end in times) - suite.timestamp
        self.suites.append(suite)

    def add_not_run(
        self, source: str, statements: Sequence[ir.Statement], verdicts: Sequence[Verdict]
    ) -> None:
        """A program that was not run: each statement as its verdict says why."""
        cases = [_case(source, s, v, []) for s, v in zip(statements, verdicts, strict=True)]
        self.suites.append(Suite(source, cases))

    def counting(self, source: str, write: WriteResult) -> WriteResult:
        """``write``, noting in :attr:`rows` how many rows each result of ``source`` has."""

        def counted(statement: str, result: ResultSet) -> object:
            self.rows[source, statement] = len(result.rows)
            return write(statement, result)

        return counted

    def counts(self) -> dict[str, int]:
        """The testcases by outcome, as the summary's words say them (``PASS``...)."""
        return {
            word: sum(suite.count(outcome) for suite in self.suites)
            for outcome, word in SUMMARY_WORDS.items()
        }

    def summary(self) -> str:
        """``PASS=3 WARN=0 FAIL=1 ERROR=0 SKIP=2 TOTAL=6``: the testcases by outcome."""
        counts = self.counts()
        words = [f"{word}={count}" for word, count in counts.items()]
        return " ".join([*words, f"TOTAL={sum(counts.values())}"])

    def to_xml(self) -> ET.Element:
        root = ET.Element("testsuites", name="sqlml")
        failed = ("failure", "warning") if self.warnings == "failure" else ("failure",)
        total = sum(suite.time for suite in self.suites)
        _counts(root, self.suites, total, failed, skipped=False)
        for suite in self.suites:
            element = ET.SubElement(root, "testsuite", name=_clean(suite.name))
            _counts(element, [suite], suite.time, failed, skipped=True)
            element.set("timestamp", strftime("%Y-%m-%dT%H:%M:%S", gmtime(suite.timestamp)))
            element.set("file", _clean(suite.name))
            for case in suite.cases:
                _add_case(element, case, self.warnings)
        return root

    def write(self, path: str | Path) -> None:
        """Save the report as UTF-8 XML at ``path``."""
        tree = ET.ElementTree(self.to_xml())
        ET.indent(tree)
        try:
            tree.write(path, encoding="utf-8", xml_declaration=True)
        except OSError as error:
            raise SqlmlError(
                f"cannot write the JUnit report {path}: {error}",
                hint="give --junit a path in a folder that exists and can be written",
            ) from None


def _case(
    source: str, statement: ir.Statement, verdict: Verdict, records: list[StepReport]
) -> Case:
    """The testcase of ``statement`` given its ``verdict`` and the records of its steps."""
    case = Case(_name(statement), source, outcome=verdict.outcome, statement=statement.id)
    case.line, case.column = statement.line, statement.column
    times = [(r.started_at, r.ended_at) for r in records if r.started_at and r.ended_at]
    if times and verdict.outcome != SKIPPED:
        case.started = min(start for start, _ in times)
        case.time = max(0.0, max(end for _, end in times) - case.started)
    if verdict.diagnostic is not None:
        case.message = verdict.diagnostic.render(source)
        if verdict.outcome != SKIPPED:
            case.details = f"{case.message}\n\nstatement:\n{statement.text}"
    elif verdict.outcome == PASSED and records:
        warning = warned(statement, records[-1].outputs.get("result"))
        if warning is not None:
            case.outcome, case.message = "warning", warning.render(source)
            case.details = f"{case.message}\n\nstatement:\n{statement.text}"
    return case


def _own(statement: ir.Statement, records: Mapping[str, StepReport]) -> list[StepReport]:
    """The records of ``statement``'s steps: those of its parts (``ID-...``), its own last."""
    parts = [r for name, r in records.items() if name.startswith(f"{statement.id}-")]
    return [*parts, records[statement.id]] if statement.id in records else parts


def _name(statement: ir.Statement) -> str:
    first = statement.text.strip().split("\n", 1)[0].strip()
    name = f"{statement.id}: {first}"
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 3] + "..."


def _counts(
    element: ET.Element,
    suites: Sequence[Suite],
    seconds: float,
    failed: Sequence[str],
    *,
    skipped: bool,
) -> None:
    """The ``tests``, ``failures`` (the cases of the ``failed`` outcomes), ``errors`` (and, if
    ``skipped``, ``skipped``) counts and the ``time`` of ``suites``."""
    element.set("tests", str(sum(len(suite.cases) for suite in suites)))
    counted = [(failed, "failures"), (["error"], "errors")]
    for outcomes, attribute in counted + ([(["skipped"], "skipped")] if skipped else []):
        count = sum(suite.count(outcome) for suite in suites for outcome in outcomes)
        element.set(attribute, str(count))
    element.set("time", f"{seconds:.3f}")


def _add_case(parent: ET.Element, case: Case, warnings: str) -> None:
    element = ET.SubElement(
        parent,
        "testcase",
        name=_clean(case.name),
        classname=_clean(case.classname),
        file=_clean(case.classname),
        line=str(case.line),
        time=f"{case.time:.3f}",
    )
    if case.outcome == "warning" and warnings == "passed":
        ET.SubElement(element, "system-out").text = _clean(case.message)
    elif case.outcome != "passed":
        tag, kind = ("failure", "warning") if case.outcome == "warning" else (case.outcome, None)
        message = case.message.split("\n", 1)[0]  # the rest (a hint) is in the text
        child = ET.SubElement(element, tag, message=_clean(message))
        if kind:
            child.set("type", kind)
        child.text = _clean(case.details or case.message)


def _clean(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (ElementTree escapes the rest)."""
    return _NOT_XML.sub("\ufffd", text)
