"""SQLFlow's tutorials run unchanged on DuckDB and MySQL and reach SQLFlow's figures.

Each folder of ``examples/sqlflow/`` with a ``tutorial.sql`` is one tutorial
(``examples/sqlflow/README.md``): ``data.py`` prints the SQL that recreates its tables,
``tutorial.sql`` holds its statements as SQLFlow's doc writes them, ``measure.sql`` what
measures it afterwards and, in comment lines, what it must reach:

    -- expect: <query returning one number> >= <figure>   -- <where the figure comes from>
    -- expect: <query returning one number> <= <figure>   -- <...>
    -- expect-file: <path relative to the folder>         -- <...>

For each tutorial and database, a copy of ``examples/`` is made, ``data.py`` run, and
``sqlml run`` (the command's entry point, in-process: TensorFlow is imported once) runs the
data, the tutorial and the measure against the database, each checked by ``sqlml check``
right before (it may report errors only in the statements the run does not pass, see
``tests/check_against_run.py``); then every
expectation is checked: the query's number against the figure, the file a non-empty PNG.
A defect of sqlml a tutorial meets is declared in its ``measure.sql`` (``-- known-short:``,
``-- known-failure:``, see ``KNOWN``): the test is then expected to fail, strictly.
On MySQL the tutorials' databases (iris, boston, titanic, ...) and their models stay on the
test server: each data script drops and recreates its tables.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from check_against_run import check_errors, false_errors, unpassed_in_report
from conftest import datasource_url

from sqlml.cli import main
from sqlml.datasources import connect, dialect_of

ROOT = Path(__file__).resolve().parent.parent
SQLFLOW = ROOT / "examples" / "sqlflow"
TUTORIALS = sorted(p.parent.name for p in SQLFLOW.glob("*/tutorial.sql"))
DATABASES = ["duckdb", "mysql"]
TIMEOUT = 300
KERAS = re.compile(r"\bTO\s+TRAIN\s+(DNN\w*|Linear\w*|sqlflow_models\.\w+)", re.IGNORECASE)
EXPECT = re.compile(
    r"--\s*expect:\s*(?P<query>.+?)\s+(?P<op>>=|<=)\s+(?P<figure>[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)"
    r"(?:\s+--\s*(?P<source>.*))?"
)
EXPECT_FILE = re.compile(r"--\s*expect-file:\s*(?P<path>\S+)(?:\s+--\s*(?P<source>.*))?")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# A known defect of sqlml, declared in measure.sql, marks the test strictly (it says when the
# defect is gone): "-- known-short: <reason>" where a measure misses its figure,
# "-- known-failure: <reason>" where a statement fails; "-- known-short[mysql]: ..." on one
# database only. Several lines of one kind make one reason.
KNOWN = re.compile(
    r"--\s*known-(?P<kind>short|failure)(?:\[(?P<database>\w+)\])?:\s*(?P<reason>.*)"
)


class RunFailed(AssertionError):
    """``sqlml run`` failed on a program of a tutorial."""


class ShortOfTheFigure(AssertionError):
    """A tutorial ran but a measure missed its expectation."""


@dataclass(frozen=True)
class Expectation:
    """One ``-- expect:`` line: ``query``'s number compared by ``op`` with ``figure``."""

    query: str
    op: str
    figure: float
    source: str

    def holds(self, value: float) -> bool:
        return value >= self.figure if self.op == ">=" else value <= self.figure


@dataclass(frozen=True)
class ExpectedFile:
    """One ``-- expect-file:`` line: a PNG the tutorial draws, relative to its folder."""

    path: str
    source: str


def expectations(measure: str) -> tuple[list[Expectation], list[ExpectedFile]]:
    """The expectations written in the comment lines of ``measure``."""
    values: list[Expectation] = []
    files: list[ExpectedFile] = []
    for line in measure.splitlines():
        if found := EXPECT.fullmatch(line.strip()):
            figure = float(found["figure"])
            values.append(Expectation(found["query"], found["op"], figure, found["source"] or ""))
        elif found := EXPECT_FILE.fullmatch(line.strip()):
            files.append(ExpectedFile(found["path"], found["source"] or ""))
        elif re.match(r"--\s*expect", line.strip()):
            raise ValueError(f"not an expectation: {line}")
    return values, files


def sqlml_run(
    program: Path, url: str, capsys: pytest.CaptureFixture[str], report: Path
) -> tuple[int, str]:
    """``sqlml run program --datasource url --junit report``: its exit status and what it
    printed to stderr (its messages and errors; the tables it shows go to stdout)."""
    status = main(["run", str(program), "--datasource", url, "--junit", str(report)])
    _, err = capsys.readouterr()
    return status, err


def number(value: object) -> float:
    """A query's one value as a float (MySQL gives decimals; NULL is NaN, which fails)."""
    if value is None:
        return math.nan
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def measured(url: str, query: str) -> float:
    ds = connect(url)
    try:
        result = ds.execute(query)
    finally:
        ds.close()
    assert result is not None and len(result.rows) == 1 and len(result.rows[0]) == 1, (
        f"the query returns no single value: {result}"
    )
    return number(result.rows[0][0])


def known_defects(measure: str, database: str) -> dict[type[AssertionError], str]:
    """The failures ``measure`` declares on ``database``: the exception, the reason."""
    reasons: dict[type[AssertionError], list[str]] = {}
    for line in measure.splitlines():
        if (found := KNOWN.fullmatch(line.strip())) and found["database"] in (None, database):
            kind = ShortOfTheFigure if found["kind"] == "short" else RunFailed
            reasons.setdefault(kind, []).append(found["reason"])
    return {kind: " ".join(lines) for kind, lines in reasons.items()}


def _marks(tutorial: str, database: str) -> list[pytest.MarkDecorator]:
    marks = []
    if KERAS.search((SQLFLOW / tutorial / "tutorial.sql").read_text()):
        marks.append(pytest.mark.keras)
    if database == "mysql":
        marks.append(pytest.mark.mysql)
    defects = known_defects((SQLFLOW / tutorial / "measure.sql").read_text(), database)
    if defects:
        reason = "; ".join(defects.values())
        raises = tuple(defects)
        marks.append(pytest.mark.xfail(raises=raises, strict=True, reason=reason))
    return marks


@pytest.mark.parametrize(
    ("tutorial", "database"),
    [pytest.param(t, d, id=f"{t}-{d}", marks=_marks(t, d)) for t in TUTORIALS for d in DATABASES],
)
def test_tutorial_runs_and_reaches_the_figures(
    tutorial: str,
    database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    examples = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", examples, ignore=shutil.ignore_patterns("*.png"))
    folder = examples / "sqlflow" / tutorial
    url = datasource_url(database, tmp_path)
    data = subprocess.run(
        [sys.executable, str(folder / "data.py")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert data.returncode == 0, f"{tutorial}: data.py failed:\n{data.stderr}"
    (folder / "data.sql").write_text(data.stdout)
    for program in ("data.sql", "tutorial.sql", "measure.sql"):
        found = check_errors(folder / program, url)
        report = tmp_path / f"{program}.xml"
        status, messages = sqlml_run(folder / program, url, capsys, report)
        unpassed = unpassed_in_report(report, folder / program, dialect_of(url))
        assert false_errors(found, folder / program, unpassed) == [], f"sqlml check {program}"
        if status != 0:
            failed = f"{tutorial} on {database}: sqlml run {program} failed:\n{messages[-3000:]}"
            raise RunFailed(failed)
    values, files = expectations((folder / "measure.sql").read_text())
    missed = []
    for expected in values:
        got = measured(url, expected.query)
        if not expected.holds(got):
            missed.append(
                f"{expected.query} {expected.op} {expected.figure} ({expected.source}): got {got}"
            )
    for expected in files:
        path = folder / expected.path
        if not path.is_file() or not path.read_bytes().startswith(PNG_SIGNATURE):
            missed.append(f"{expected.path} ({expected.source}): no PNG drawn")
        elif path.stat().st_size < 1000:
            missed.append(f"{expected.path} ({expected.source}): {path.stat().st_size} bytes")
    if missed:
        raise ShortOfTheFigure(f"{tutorial} on {database}:\n" + "\n".join(missed))


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_tutorial_folder_is_complete(tutorial: str):
    """data.py, tutorial.sql whose statements each cite SQLFlow's doc, and a measure."""
    folder = SQLFLOW / tutorial
    assert (folder / "data.py").is_file()
    tutorial_sql = (folder / "tutorial.sql").read_text()
    statements = [s for s in re.split(r";\s*\n", tutorial_sql) if s.strip()]
    for statement in statements:
        assert statement.lstrip().startswith("--"), f"{tutorial}: no source comment:\n{statement}"
    values, files = expectations((folder / "measure.sql").read_text())
    assert values or files, f"{tutorial}: measure.sql states no expectation"
    assert all(e.source for e in [*values, *files]), f"{tutorial}: an expectation cites nothing"
    for line in (folder / "measure.sql").read_text().splitlines():
        if line.strip().startswith("-- known"):
            found = KNOWN.fullmatch(line.strip())
            assert found and found["database"] in (None, *DATABASES), f"{tutorial}: {line}"


def test_known_defects_are_read():
    measure = (
        "-- known-short: accuracy 0.9\n"
        "-- known-short: where the doc reports 0.98\n"
        "-- known-failure[mysql]: a statement fails\n"
    )
    assert known_defects(measure, "duckdb") == {
        ShortOfTheFigure: "accuracy 0.9 where the doc reports 0.98"
    }
    assert known_defects(measure, "mysql") == {
        ShortOfTheFigure: "accuracy 0.9 where the doc reports 0.98",
        RunFailed: "a statement fails",
    }


def test_expectation_lines_are_read():
    measure = (
        "SELECT 1;\n"
        "-- expect: SELECT a - b FROM t WHERE c >= 2 >= 0.98   -- the doc's accuracy\n"
        "-- expect: SELECT rmse FROM e <= 1e-1\n"
        "-- expect-file: m_explain.png   -- the plot\n"
    )
    values, files = expectations(measure)
    assert values == [
        Expectation("SELECT a - b FROM t WHERE c >= 2", ">=", 0.98, "the doc's accuracy"),
        Expectation("SELECT rmse FROM e", "<=", 0.1, ""),
    ]
    assert files == [ExpectedFile("m_explain.png", "the plot")]
    assert values[0].holds(0.98) and not values[0].holds(0.97)
    assert values[1].holds(0.05) and not values[1].holds(math.nan)
    with pytest.raises(ValueError, match="not an expectation"):
        expectations("-- expect: SELECT 1 = 1\n")
