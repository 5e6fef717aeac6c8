"""What CI systems make of sqlml's reports: small re-implementations, in Python, of the rules
their parsers apply, written from their source (named in each docstring), for the tests to
read sqlml's JUnit XML and stderr as those tools do.

Each keeps only what decides what a reviewer sees: a test case's status, its text, its file and
line; none is a copy of the tool's code.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import xmlschema

# ---------------------------------------------------------------------------------- GitLab


@dataclass(frozen=True)
class GitLabCase:
    """A test case as GitLab keeps it (``Gitlab::Ci::Reports::TestCase``)."""

    suite_name: str
    name: str
    classname: str | None
    file: str | None
    status: str  # success, failed, error or skipped
    system_output: str | dict[str, str] | None


def _from_xml(element: ET.Element) -> str | dict[str, str] | None:
    """An element without children as ActiveSupport's ``Hash.from_xml`` gives it to GitLab
    (activesupport/lib/active_support/xml_mini.rb and core_ext/hash/conversions.rb,
    ``XMLConverter#process_hash``): its text when it has some that is not blank
    (``become_content?``: the attributes are then dropped), else its attributes (a hash), else
    nil (``nothing?``)."""
    text = element.text or ""
    if text.strip():
        return text
    return dict(element.attrib) or None


def gitlab_cases(xml: str) -> list[GitLabCase]:
    """The test cases GitLab reads from a JUnit report, as
    gitlab-org/gitlab lib/gitlab/ci/parsers/test/junit.rb does: one top-level ``testsuites``
    (or a ``testsuite``), the ``testcase`` elements of each suite; the status from the first of
    ``failure``, ``error``, ``skipped`` present (``data.key?``), the system output that child's
    value (the failure's, error's or skipped's ``Hash.from_xml`` value; none for a passed case,
    whose ``system-out`` is dropped), ``file`` the testcase's attribute."""
    root = ET.fromstring(xml)
    suites = list(root) if root.tag == "testsuites" else [root]
    cases = []
    for suite in suites:
        for case in suite.iter("testcase"):
            status, output = "success", None
            for tag, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
                child = case.find(tag)
                if child is not None:
                    status, output = name, _from_xml(child)
                    break
            cases.append(
                GitLabCase(
                    suite.get("name", ""),
                    case.get("name", ""),
                    case.get("classname"),
                    case.get("file"),
                    status,
                    output,
                )
            )
    return cases


def gitlab_merge_request_widget(cases: list[GitLabCase]) -> list[GitLabCase]:
    """The test cases GitLab's merge-request widget lists (gitlab-org/gitlab
    app/assets/javascripts/vue_merge_request_widget/extensions/test_report/index.vue,
    ``prepareSuites``: the suite's new, existing and resolved failures and errors, from
    lib/gitlab/ci/reports/test_suite_comparer.rb); a passed or skipped case is only counted.
    Each listed case's "View details" shows its file and system output."""
    return [case for case in cases if case.status in ("failed", "error")]


# -------------------------------------------------------------- mikepenz/action-junit-report


@dataclass(frozen=True)
class Annotation:
    """A check-run annotation (``Annotation`` of src/testParser.ts)."""

    path: str
    start_line: int
    annotation_level: str  # failure or notice
    status: str  # success, failure or skipped
    title: str
    message: str


def _resolve_file_and_line(
    file: str | None, line: str | None, classname: str, output: str
) -> tuple[str, int]:
    """``resolveFileAndLine`` of src/testParser.ts: the ``file`` given, else the classname's
    last dot-separated part (``pipes/b_train.sql`` gives ``sql``); with a line too, both as
    they are; else the last `` <...file...>:<n>`` in the stack trace, else line 1."""
    file_name = file or classname.split(".")[-1]
    number = _int(line)
    if file_name and number:
        return file_name, number
    escaped = re.escape(file_name).replace("::", "/", 1)
    matches = re.findall(rf" [^ ]*{escaped}.*?:\d+", output)
    if not matches:
        return file_name, number or 1
    return file_name, _int(matches[-1].split(":")[-1]) or -1


def _int(text: str | None) -> int | None:
    """``safeParseInt``: JavaScript's ``parseInt`` of the leading digits, or None."""
    found = re.match(r"\s*[-+]?\d+", text or "")
    return int(found.group()) if found else None


def mikepenz_annotations(xml: str, annotate_notice: bool = False) -> list[Annotation]:
    """The annotations mikepenz/action-junit-report posts for a JUnit report: ``parseSuite``
    of src/testParser.ts makes one per test case (level ``failure`` for a ``failure`` or
    ``error`` that is not skipped, else ``notice``; its message the failure's or error's
    ``message``, else the first two lines of its text, else the test's name; its file and line
    from the testcase's ``file`` and ``line``, the failure's, the suite's, or the classname),
    and ``annotateTestResult`` of src/annotator.ts posts the notices only with
    ``annotate_notice: true``. (``resolvePath`` then looks for ``**/<file>.*``, a file named
    after it with one more extension, to complete a Java class's path; a ``.sql`` file's path
    has none, and stays as it is, as here.)"""
    root = ET.fromstring(xml)
    annotations = []
    for suite in root.iter("testsuite"):
        for case in suite.findall("testcase"):
            failure, error = case.find("failure"), case.find("error")
            failed_element = failure if failure is not None else error
            skip = case.find("skipped") is not None or case.get("status") in (
                "disabled",
                "ignored",
            )
            success = failed_element is None
            stack_trace = (failed_element.text or "").strip() if failed_element is not None else ""
            message = (
                (failed_element.get("message") if failed_element is not None else None)
                or "\n".join(stack_trace.split("\n")[:2])
                or case.get("name", "")
            ).strip()
            path, line = _resolve_file_and_line(
                case.get("file")
                or (failure.get("file") if failure is not None else None)
                or suite.get("file"),
                case.get("line")
                or (failure.get("line") if failure is not None else None)
                or suite.get("line"),
                case.get("classname") or case.get("name", ""),
                stack_trace,
            )
            title = f"{path}.{case.get('name')}" if path != case.get("name") else case.get("name")
            level = "notice" if success or skip else "failure"
            status = "skipped" if skip else "success" if success else "failure"
            annotations.append(Annotation(path, line, level, status, title, message))
    return [a for a in annotations if annotate_notice or a.annotation_level != "notice"]


# ------------------------------------------------------------------- dorny/test-reporter


def dorny_results(xml: str) -> dict[str, str]:
    """Each test's result as dorny/test-reporter's java-junit parser gives it
    (src/parsers/java-junit/java-junit-parser.ts, ``getTestCaseResult``): ``failed`` with a
    ``failure`` or ``error``, ``skipped`` with a ``skipped``, else ``success``. With its
    default ``fail-on-error: true`` a failed test fails the job."""
    results = {}
    for case in ET.fromstring(xml).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            results[case.get("name", "")] = "failed"
        elif case.find("skipped") is not None:
            results[case.get("name", "")] = "skipped"
        else:
            results[case.get("name", "")] = "success"
    return results


# ------------------------------------------------------------- GitHub's problem matchers


@dataclass(frozen=True)
class Issue:
    """An annotation a problem matcher makes of a line of a step's output."""

    type: str  # error, warning or notice
    message: str
    file: str | None
    line: int | None
    column: int | None


_COLOUR = re.compile(r"\x1b\[[0-9;]*m?")


def problem_matcher_issues(matcher: dict, output: str, workspace: Path) -> list[Issue]:
    """The annotations GitHub's runner makes of ``output`` with a one-pattern ``matcher``
    (actions/runner src/Runner.Worker/Handlers/OutputManager.cs, ``OnDataReceived`` and
    ``ConvertToIssue``, and IssueMatcher.cs): each line, its colour codes stripped, matched
    against the pattern's ``regexp``; an empty message is dropped; the severity group (none:
    the matcher's ``severity``, else error) must be error, warning or notice, case aside, or the
    line is no issue; the file is kept only if it exists, relative to ``workspace``."""
    [config] = matcher["problemMatcher"]
    [pattern] = config["pattern"]
    regexp = re.compile(pattern["regexp"])
    issues = []
    for line in output.splitlines():
        found = regexp.search(_COLOUR.sub("", line))
        if found is None:
            continue

        def group(name: str, found: re.Match = found) -> str | None:
            return found.group(pattern[name]) if name in pattern else None

        message = group("message")
        if not message or not message.strip():
            continue
        severity = (group("severity") or config.get("severity") or "error").lower()
        if severity not in ("error", "warning", "notice"):
            continue
        file = group("file")
        kept = file if file and (workspace / file).is_file() else None
        issues.append(Issue(severity, message, kept, _int(group("line")), _int(group("column"))))
    return issues


def matcher_in(markdown: str) -> dict:
    """The problem matcher shown as the ```json block of ``markdown`` that has one."""
    block = re.search(r"```json\n(\{\s*\"problemMatcher\".*?)```", markdown, re.S)
    assert block, "no problem matcher in the page"
    return json.loads(block.group(1))


# ------------------------------------------------------------------ the JUnit schema

_XSD = Path(__file__).parent / "junit" / "junit-10.xsd"
_TESTCASE_GROUP = (  # the testcase's last attribute: the testsuite's element follows
    '<xs:attribute name="group" type="xs:string"/>\n        </xs:complexType>\n'
    '    </xs:element>\n\n    <xs:element name="testsuite">'
)


def junit_schema(with_file_and_line: bool = True) -> xmlschema.XMLSchema:
    """Jenkins' xunit schema (tests/junit/junit-10.xsd), by default with the testcase's
    ``file`` and ``line`` attributes that GitLab and the GitHub test reporters read (and
    pytest's ``xunit1`` reports write) added: all it lacks for sqlml's reports."""
    text = _XSD.read_text(encoding="utf-8")
    assert text.count(_TESTCASE_GROUP) == 1, "the testcase's attributes have moved in the schema"
    if with_file_and_line:
        extra = '<xs:attribute name="file" type="xs:string"/>\n            '
        extra += '<xs:attribute name="line" type="xs:string"/>\n            '
        text = text.replace(_TESTCASE_GROUP, extra + _TESTCASE_GROUP)
    return xmlschema.XMLSchema(text, base_url=str(_XSD.parent))
