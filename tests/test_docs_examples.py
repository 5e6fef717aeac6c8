"""Every program in examples/ and every code block of the tutorials runs, with real outcomes.

The examples run with ``sqlml run`` in a copy of examples/ (their DuckDB file there), and
their tables are then checked: models above a stated accuracy or R2, predictions with the
right rows.

The tutorials (docs/tutorial*.md) run block by block, in order, in a temporary working
folder holding a copy of examples/ (as the root of a checkout would). Fences:

- ``sh``: run with ``bash -e -o pipefail``, ``sqlml`` on the PATH. Two kinds of line are not
  run: ``pip install ...`` (checked instead: it installs this project, with extras that
  exist) and ``export SQLML_DATASOURCE=...`` (the reader's own database; the test has set
  ``SQLML_DATASOURCE`` to its own: unset for tutorial.md, so the default DuckDB file in the
  working folder; a fresh database on the MySQL test server for tutorial-mysql.md).
- ``sql NAME.sql``, ``python NAME.py`` (any language, a file name): a file the reader
  saves; written to NAME, and used by a later ``sh`` block (which must mention it).
- ``text``: the output the ``sh`` block before it prints (stdout and stderr). Each line must
  appear in that output, whitespace aside; ``...`` stands for any text, a number with a
  decimal point matches within 10% (or 0.05), other numbers exactly; table rules
  (``---+---``) are not compared.
- ``sh cluster`` (tutorial-kubernetes.md only): commands that need a Kubernetes cluster, a
  container registry or Docker, none of which exists here: not run; every command must be
  kubectl, argo or docker (or printf and rm, to write and delete a Secret's file).
- ``sql admin`` (tutorial-mysql.md only): what the server's administrator runs once to
  create the reader's database and user: not run; the test creates its own database.

Any other fence fails the test, so every block is accounted for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest
from conftest import MYSQL_URL, datasource_url

from sqlml.models.store import ModelStore
from sqlml.runtime.datasource import connect

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TUTORIALS = sorted((ROOT / "docs").glob("tutorial*.md"))
TIMEOUT = 900
KERAS = re.compile(r"\b(DNN\w*|Linear(Classifier|Regressor))\b")
FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
PIP_INSTALL = re.compile(r"^pip install (?:-e )?(?:'\.\[([\w,]+)\]'|\.)$")
NOT_RUN = {("sh", "cluster"): "tutorial-kubernetes.md", ("sql", "admin"): "tutorial-mysql.md"}
NEED_A_CLUSTER = {"kubectl", "argo", "docker"}
CLUSTER_COMMANDS = {*NEED_A_CLUSTER, "printf", "rm"}
FILE_NAME = re.compile(r"[\w-]+\.\w+")


def command_env(datasource: str | None) -> dict[str, str]:
    """The environment of the commands: sqlml of this checkout on the PATH, the input
    cache in the test's temporary folder (conftest sets SQLML_CACHE_DIR)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("SQLML_DATASOURCE", None)
    if datasource:
        env["SQLML_DATASOURCE"] = datasource
    return env


def sqlml_run(program: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlml", "run", str(program)],
        cwd=cwd,
        env=command_env(None),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


# ---------------------------------------------------------------------------- examples


def fetch(database: Path, query: str) -> list[tuple]:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.execute(query).fetchall()


def check_iris(db: Path, folder: Path, printed: str) -> None:
    for model in ("iris_xgboost", "iris_dnn"):
        [(rows, hits)] = fetch(
            db,
            f"SELECT count(*), count(*) FILTER (p.class = t.class) FROM {model}_pred p "
            "JOIN iris_test t USING (id)",
        )
        assert rows == 30 and hits / rows >= 0.9, (model, hits)
    lines = printed.splitlines()  # the last SELECT's rows: each flower and its predictions
    assert lines[0].split("|")[0].strip() == "id" and lines[-1] == "(30 rows)", printed


def check_churn(db: Path, folder: Path, printed: str) -> None:
    [(accuracy, auc)] = fetch(db, "SELECT accuracy, auc FROM churn_xgboost_metrics")
    assert accuracy >= 0.74 and auc >= 0.8, (accuracy, auc)
    [(accuracy, auc)] = fetch(db, "SELECT accuracy, auc FROM churn_dnn_metrics")
    assert accuracy >= 0.74 and auc >= 0.8, (accuracy, auc)
    [(rows, yes, low, high)] = fetch(
        db,
        "SELECT count(*), count(*) FILTER (churned = 'yes'), min(churned_yes), max(churned_yes) "
        "FROM churn_pred",
    )
    assert rows == 300 and 40 < yes < 150 and 0 <= low < 0.1 and 0.9 < high <= 1
    ranking = [f for (f,) in fetch(db, "SELECT feature FROM churn_explanation ORDER BY 1")]
    assert ranking == [
        "contract",
        "internet_service",
        "monthly_charges",
        "payment_method",
        "tenure",
    ]
    assert (folder / "churn_explain.png").stat().st_size > 10_000


def check_houses(db: Path, folder: Path, printed: str) -> None:
    for model in ("houses_xgboost", "houses_dnn"):
        [(r2, mae)] = fetch(db, f"SELECT r2, mae FROM {model}_metrics")
        assert r2 >= 0.85 and mae < 35, (model, r2, mae)
    [(rows, error)] = fetch(
        db,
        "SELECT count(*), avg(abs(p.price - t.price)) FROM houses_pred p "
        "JOIN houses_test t USING (house_id)",
    )
    assert rows == 200 and error < 35
    [(top,)] = fetch(db, "SELECT feature FROM houses_explanation ORDER BY importance DESC LIMIT 1")
    assert top in ("size_sqm", "neighbourhood")
    assert (folder / "houses_explain.png").stat().st_size > 10_000


def check_load_churn(db: Path, folder: Path, printed: str) -> None:
    assert fetch(db, "SELECT churned, count(*) FROM churn GROUP BY 1 ORDER BY 1") == [
        ("no", 1018),
        ("yes", 482),
    ]


def check_iris_ci(db: Path, folder: Path, printed: str) -> None:
    """The run passed its ASSERTs; what they asserted holds."""
    [(accuracy,)] = fetch(db, "SELECT accuracy FROM iris_ci_eval")
    assert accuracy >= 0.85, accuracy
    assert fetch(db, "SELECT count(*), count(class) FROM iris_ci_pred") == [(30, 30)]


def check_iris_search(db: Path, folder: Path, printed: str) -> None:
    """The model kept is the trial with the lowest validation log loss of the eight."""
    losses = dict(fetch(db, "SELECT trial, validation_log_loss FROM iris_best_trials"))
    ds = connect(f"duckdb:///{db}")
    try:
        stored = ModelStore(ds).load("iris_best")
    finally:
        ds.close()
    assert len(losses) == 8
    assert stored.metadata["search"]["goal"] == "minimize"
    assert stored.metadata["search"]["best_trial"] == min(losses, key=losses.get)
    assert stored.metadata["metrics"]["validation_log_loss"] == min(losses.values())
    [(rows, hits)] = fetch(
        db,
        "SELECT count(*), count(*) FILTER (p.class = t.class) FROM iris_best_pred p "
        "JOIN iris_test t USING (id)",
    )
    assert rows == 30 and hits / rows >= 0.9, hits


def check_optimize_woodcarving(db: Path, folder: Path, printed: str) -> None:
    """SQLFlow's documented optimum: 20 soldiers and 60 trains."""
    plan = fetch(db, "SELECT product, amount FROM woodcarving_plan ORDER BY product")
    assert plan == [("soldier", 20), ("train", 60)]


def check_sklearn_iris(db: Path, folder: Path, printed: str) -> None:
    """The forest classifies held-out flowers, k-means recovers the species, the isolation
    forest flags the species it did not learn."""
    from sklearn.metrics import adjusted_rand_score

    [(rows, hits)] = fetch(
        db,
        "SELECT count(*), count(*) FILTER (p.class = t.class) FROM iris_forest_pred p "
        "JOIN iris_test t USING (id)",
    )
    assert rows == 30 and hits / rows >= 0.9, hits
    [(accuracy,)] = fetch(db, "SELECT accuracy FROM iris_forest_metrics")
    assert accuracy == hits / rows
    assert len(fetch(db, "SELECT * FROM iris_forest_explanation")) == 4
    species, clusters = zip(*fetch(db, "SELECT class, cluster FROM iris_clusters"), strict=True)
    assert len(species) == 150 and adjusted_rand_score(species, clusters) >= 0.7
    flags = fetch(
        db,
        "SELECT count(*) FILTER ((class = 'setosa') = (flag = 1)), count(*) FROM iris_outliers",
    )
    assert flags[0][0] / flags[0][1] >= 0.9, flags


def check_run_binning(db: Path, folder: Path, printed: str) -> None:
    """The script's bins hold every flower (petal lengths split as numpy splits them), its
    summary the columns' means; the function's shares are the three species' thirds."""
    counts = fetch(
        db, "SELECT rows FROM iris_binning WHERE column_name = 'petal_length' ORDER BY bin"
    )
    assert counts == [(50,), (11,), (61,), (28,)]
    means = dict(fetch(db, "SELECT column_name, mean FROM iris_column_stats"))
    assert means == pytest.approx({"petal_length": 3.758, "sepal_length": 5.843333})
    shares = fetch(db, "SELECT class, share FROM iris_shares ORDER BY class")
    assert shares == [("setosa", 0.33), ("versicolor", 0.33), ("virginica", 0.33)]


CHECKS = {
    "iris.sql": check_iris,
    "iris_ci.sql": check_iris_ci,
    "iris_search.sql": check_iris_search,
    "churn.sql": check_churn,
    "houses.sql": check_houses,
    "load_churn.sql": check_load_churn,
    "optimize_woodcarving.sql": check_optimize_woodcarving,
    "run_binning.sql": check_run_binning,
    "sklearn_iris.sql": check_sklearn_iris,
}
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.sql"))


def test_every_example_has_a_check():
    assert sorted(CHECKS) == EXAMPLE_FILES


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n, marks=[pytest.mark.keras] if KERAS.search((EXAMPLES / n).read_text()) else []
        )
        for n in EXAMPLE_FILES
    ],
)
def test_example_runs(name: str, tmp_path: Path):
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder)
    done = sqlml_run(folder / name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    CHECKS[name](tmp_path / "sqlml.duckdb", folder, done.stdout)


def test_the_data_files_are_make_data_outputs(tmp_path: Path):
    shutil.copy(EXAMPLES / "make_data.py", tmp_path)
    subprocess.run([sys.executable, str(tmp_path / "make_data.py")], check=True, timeout=600)
    for name in ("churn.csv", "houses.csv", "load_churn.sql"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name


# --------------------------------------------------------------------------- tutorials


@dataclass(frozen=True)
class Block:
    """A fenced code block of a tutorial."""

    doc: Path
    line: int  # of the opening fence
    lang: str
    tag: str  # the rest of the info string: a file name, "cluster", "admin" or ""
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}"


def blocks_of(doc: Path) -> list[Block]:
    found: list[Block] = []
    lines = doc.read_text().splitlines()
    start = None
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if fence and start is None:
            start, lang, tag, body = number, fence.group(1), fence.group(2).strip(), []
        elif line.startswith("```") and start is not None:
            found.append(Block(doc, start, lang, tag, "\n".join(body) + "\n"))
            start = None
        elif start is not None:
            body.append(line)
    assert start is None, f"{doc.name}:{start}: a code block is never closed"
    return found


def output_matches(expected: str, output: str) -> list[str]:
    """The lines of ``expected`` that appear nowhere in ``output`` (see the module doc)."""
    actual = [" ".join(line.split()) for line in output.splitlines()]
    return [
        line
        for line in expected.splitlines()
        if line.strip() and not re.fullmatch(r"[-+| ]+", line)
        if not any(_line_matches(" ".join(line.split()), a) for a in actual)
    ]


def _line_matches(expected: str, actual: str) -> bool:
    numbers: list[str] = []
    pattern = ""
    for piece in re.split(rf"(\.\.\.|{NUMBER.pattern})", expected):
        if piece == "...":
            pattern += ".*"
        elif NUMBER.fullmatch(piece):
            numbers.append(piece)
            pattern += f"({NUMBER.pattern})"
        else:
            pattern += re.escape(piece)
    found = re.fullmatch(pattern, actual)
    return found is not None and all(
        _number_matches(want, got) for want, got in zip(numbers, found.groups(), strict=True)
    )


def _number_matches(want: str, got: str) -> bool:
    if "." not in want and "e" not in want:
        return want == got
    return abs(float(got) - float(want)) <= max(0.05, 0.1 * abs(float(want)))


def check_pip_install(line: str) -> None:
    """``pip install -e '.[a,b]'`` or ``pip install -e .``, with extras the project has."""
    found = PIP_INSTALL.match(line)
    assert found, f"not an install of this project: {line}"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in (found.group(1) or "").split(","):
        assert not extra or extra in extras, f"no extra {extra!r} in pyproject.toml: {line}"


def runnable_script(block: Block) -> str:
    """The block's shell script, less the lines the test does not run (module doc)."""
    kept = []
    for line in block.text.splitlines():
        if line.startswith("pip install"):
            check_pip_install(line)
        elif not line.startswith("export SQLML_DATASOURCE="):
            kept.append(line)
    return "\n".join(kept) + "\n"


@dataclass
class TutorialRun:
    """One tutorial's blocks, run in order in their own working folder."""

    blocks: list[Block]
    folder: Path
    datasource: str | None
    done: dict[int, str | None] = field(default_factory=dict)  # index -> failure or None
    last_output: str | None = None

    def until(self, block: Block) -> None:
        """Run every block up to ``block``; fail if it or one before it failed."""
        index = self.blocks.index(block)
        for i in range(index + 1):
            if i not in self.done:
                self.done[i] = self._run(self.blocks[i])
            if self.done[i] is not None:
                where = "" if i == index else f"an earlier block, {self.blocks[i].id}: "
                pytest.fail(f"{where}{self.done[i]}", pytrace=False)

    def _run(self, block: Block) -> str | None:
        kind = (block.lang, block.tag)
        if kind in NOT_RUN:
            return self._not_run(block)
        if block.lang == "sh" and not block.tag:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", runnable_script(block)],
                cwd=self.folder,
                env=command_env(self.datasource),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT,
            )
            self.last_output = done.stdout
            if done.returncode:
                return f"{block.id}: exit status {done.returncode}:\n{done.stdout}"
            return None
        if block.lang != "text" and FILE_NAME.fullmatch(block.tag):
            later = self.blocks[self.blocks.index(block) + 1 :]
            if not any(b.lang == "sh" and block.tag in b.text for b in later):
                return f"{block.id}: no later sh block runs {block.tag}"
            (self.folder / block.tag).write_text(block.text)
            return None
        if block.lang == "text":
            if self.last_output is None:
                return f"{block.id}: a text block must follow an sh block that ran"
            output, self.last_output = self.last_output, None
            missing = output_matches(block.text, output)
            if missing:
                return f"{block.id}: not in the output: {missing}\noutput:\n{output}"
            return None
        return f"{block.id}: a ```{block.lang} {block.tag} block is of no known kind"

    def _not_run(self, block: Block) -> str | None:
        allowed_in = NOT_RUN[(block.lang, block.tag)]
        if block.doc.name != allowed_in:
            return f"{block.id}: ```{block.lang} {block.tag} blocks belong in {allowed_in} only"
        if block.tag == "cluster":
            commands = [
                line.split()[0]
                for line in block.text.splitlines()
                if line.strip() and not line.startswith((" ", "#"))
            ]
            if not set(commands) <= CLUSTER_COMMANDS or not set(commands) & NEED_A_CLUSTER:
                return f"{block.id}: commands {commands} need no cluster: make it a sh block"
        self.last_output = None
        return None


TUTORIAL_BLOCKS = [block for doc in TUTORIALS for block in blocks_of(doc)]


def _marks(doc: Path) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.keras] if KERAS.search(doc.read_text()) else []
    return [*marks, pytest.mark.mysql] if "mysql" in doc.name else marks


def admin_execute(sql: str) -> None:
    """Run ``sql`` on the MySQL test server."""
    admin = connect(MYSQL_URL)
    try:
        admin.execute(sql)
    finally:
        admin.close()


class TutorialRuns:
    """The runs of the tutorials, each started when its first block is tested."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self.tmp = tmp
        self.runs: dict[Path, TutorialRun] = {}
        self.databases: list[str] = []

    def of(self, doc: Path) -> TutorialRun:
        if doc not in self.runs:
            folder = self.tmp.mktemp(doc.stem)
            shutil.copytree(EXAMPLES, folder / "examples")
            datasource = None
            if "mysql" in doc.name:  # a fresh database on the test server, dropped at the end
                server = datasource_url("mysql", folder)
                database = f"sqlml_doc_{uuid.uuid4().hex[:10]}"
                admin_execute(f"CREATE DATABASE {database}")
                self.databases.append(database)
                datasource = f"{server.rsplit('/', 1)[0]}/{database}"
            blocks = [b for b in TUTORIAL_BLOCKS if b.doc == doc]
            self.runs[doc] = TutorialRun(blocks, folder, datasource)
        return self.runs[doc]

    def close(self) -> None:
        for database in self.databases:
            admin_execute(f"DROP DATABASE IF EXISTS {database}")


@pytest.fixture(scope="module")
def tutorial_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TutorialRuns]:
    runs = TutorialRuns(tmp_path_factory)
    yield runs
    runs.close()


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, id=b.id, marks=_marks(b.doc)) for b in TUTORIAL_BLOCKS],
)
def test_tutorial_block(block: Block, tutorial_runs: TutorialRuns):
    tutorial_runs.of(block.doc).until(block)


BROKEN = """\
```sql broken.sql
SELECT * FROM churn_train TO TRAIN xgboost.gbtree LABEL churned INTO m;
```

```sh
sqlml run broken.sql
```
"""


def test_a_broken_statement_in_a_tutorial_fails_its_block(tmp_path: Path):
    doc = tmp_path / "tutorial-broken.md"
    doc.write_text(BROKEN)
    blocks = blocks_of(doc)
    assert [(b.lang, b.tag, b.line) for b in blocks] == [("sql", "broken.sql", 1), ("sh", "", 5)]
    run = TutorialRun(blocks, tmp_path, None)
    with pytest.raises(pytest.fail.Exception, match=r"tutorial-broken.md:5: exit status 1"):
        run.until(blocks[1])
    assert "broken.sql:1:1: error: DuckDB: Catalog Error" in run.last_output  # no such table


def test_a_cluster_block_outside_the_kubernetes_tutorial_fails(tmp_path: Path):
    doc = tmp_path / "tutorial.md"
    doc.write_text("```sh cluster\nkubectl get pods\n```\n")
    run = TutorialRun(blocks_of(doc), tmp_path, None)
    with pytest.raises(pytest.fail.Exception, match=r"belong in tutorial-kubernetes\.md only"):
        run.until(run.blocks[0])


@pytest.mark.parametrize(
    ("expected", "output", "missing"),
    [
        ("trained m on 960 rows: acc 0.7958", "x\ntrained  m on 960 rows: acc 0.80\n", []),
        ("trained m on 960 rows: acc 0.7958", "trained m on 961 rows: acc 0.7958", ["trained"]),
        ("acc 0.7958", "acc 0.6", ["acc"]),
        ("sqlml: run ...: 5 steps, logs in ...", "sqlml: run 2026-a: 5 steps, logs in /x", []),
        (" a | b\n---+---\n 1 | x", "a | b\n1 | x", []),
        ("exit status: 1", "exit status: 2", ["exit"]),
    ],
)
def test_expected_output_is_matched_loosely(expected: str, output: str, missing: list[str]):
    assert [line.split()[0] for line in output_matches(expected, output)] == missing
