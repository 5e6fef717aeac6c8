"""Every program in examples/ runs, with real outcomes; the pages a newcomer reads first
(README.md, docs/tutorial*.md) run block by block and show exactly what their commands print.

The examples run with ``sqlml run`` in a copy of examples/ (their DuckDB file there), and
their tables are then checked: models above a stated accuracy or R2, predictions with the
right rows. No example prints a warning (such as a selected column that COLUMN leaves out).
Right before it runs, ``sqlml check`` must find no error in an example, without a datasource
and with the run's; nor in a program a page runs, but in the statements whose errors its run
prints (``tests/check_against_run.py``).

The pages run block by block, in order, in a temporary working folder holding a copy of
examples/ (as the root of a checkout would). Fences:

- ``sh``: run with ``bash -e -o pipefail``, ``sqlml`` on the PATH. Not run: ``pip install
  ...`` (checked instead: it installs this project, with extras that exist; of ``pip install
  ... && COMMAND``, COMMAND runs) and ``export SQLML_DATASOURCE=...`` (the reader's own
  database; the test has set ``SQLML_DATASOURCE`` to its own: unset for README.md and
  tutorial.md, so the default DuckDB file in the working folder; a fresh database on the
  MySQL test server for tutorial-mysql.md, whose name the output shows as the page's).
- ``sql NAME.sql``, ``python NAME.py`` (any language, a file name): a file the reader
  saves; written to NAME, and used by a later ``sh`` block (which must mention it).
- ``sql example``: a program shown without its command: run with ``sqlml run``.
- ``text``: what the block before it printed (stdout and stderr, in order), compared
  exactly but for the placeholders of what varies between runs: see tests/doc_blocks.py,
  which also says how to regenerate the blocks from real runs:

      SQLML_REGENERATE_DOCS=1 python -m pytest tests/test_docs_examples.py

  A block whose output the page does not show must print no warning.
- Not run: ``sh cluster`` (tutorial-kubernetes.md only): commands that need a Kubernetes
  cluster, a container registry or Docker, none of which exists here; every command must be
  kubectl, argo or docker (or printf and rm, to write and delete a Secret's file). ``sql
  admin`` (tutorial-mysql.md only): what the server's administrator runs once to create the
  reader's database and user; the test creates its own database. ``sh synopsis`` (README.md
  only): the forms of sqlml's commands, capitals standing for the reader's words; each line
  a command of ``sqlml``. ``sh suite`` (README.md only): the test suite's command, which
  must be the one ``.ci/run`` runs (this run is part of it). ``python notebook`` and ``sql
  notebook`` (README.md only): notebook cells, run in a kernel by tests/test_readme.py.

Any other fence fails the test, so every block is accounted for.
"""

from __future__ import annotations

import contextlib
import difflib
import io
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
from check_against_run import check_errors, failed_in_output, false_errors, programs_run
from conftest import MYSQL_URL, datasource_url

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore
from tests.doc_blocks import REGENERATE, Block, Rewrites, blocks_of, matches, placeheld

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("tutorial*.md"))]
TIMEOUT = 900
KERAS = re.compile(r"\b(DNN\w*|Linear(Classifier|Regressor))\b")
PIP_INSTALL = re.compile(r"^pip install (?:-e )?(?:'\.\[([\w,]+)\]'|\.)(?: && (.+))?$")
NOT_RUN = {
    ("sh", "cluster"): "tutorial-kubernetes.md",
    ("sql", "admin"): "tutorial-mysql.md",
    ("sh", "synopsis"): "README.md",
    ("sh", "suite"): "README.md",
    ("python", "notebook"): "README.md",
    ("sql", "notebook"): "README.md",
}
NEED_A_CLUSTER = {"kubectl", "argo", "docker"}
CLUSTER_COMMANDS = {*NEED_A_CLUSTER, "printf", "rm"}
FILE_NAME = re.compile(r"[\w-]+\.\w+")
READERS_DATABASE = re.compile(r"^export SQLML_DATASOURCE='[^']*/(\w+)'$", re.MULTILINE)
OPTION = re.compile(r"(?:^|[\s\[])(--?[a-z][-\w]*)")
CI_SUITE = re.compile(r"^# The README's test command:\n(.+)$", re.MULTILINE)


def command_env(datasource: str | None) -> dict[str, str]:
    """The environment of the commands: sqlml of this checkout on the PATH, the input
    cache in the test's temporary folder (conftest sets SQLML_CACHE_DIR)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
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
    """Of the 30 held-out flowers, the trees name 27 right and the network 28 (0.9 and 0.933:
    trained on the four measures only; with the id, sorted by species, the network got all)."""
    for model, right in (("iris_xgboost", 27), ("iris_dnn", 28)):
        [(rows, hits)] = fetch(
            db,
            f"SELECT count(*), count(*) FILTER (p.class = t.class) FROM {model}_pred p "
            "JOIN iris_test t USING (id)",
        )
        assert rows == 30 and hits >= right, (model, hits)
    lines = printed.splitlines()  # the last SELECT: the flowers each model named right
    header = [part.strip() for part in lines[0].split("|")]
    assert header == ["class", "flowers", "xgboost_right", "dnn_right"], printed
    assert lines[-1] == "(3 rows)", printed


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


def check_churn_queries(db: Path, folder: Path, printed: str) -> None:
    """The view scores every customer, read here by DuckDB itself (no sqlml): the classes of
    the held-out ones are TO PREDICT's, right about four times in five, and the filter on
    the probability printed the customers above 0.9."""
    [(rows, right, same)] = fetch(
        db,
        "SELECT count(*), count(*) FILTER (r.predicted = n.churned), "
        "count(*) FILTER (r.predicted = p.churned) FROM churn_risk r "
        "JOIN churn_numbers n USING (customer_id) JOIN churn_queries_pred p USING (customer_id)",
    )
    assert rows == same == 300 and right / rows >= 0.75, (rows, right, same)
    assert fetch(db, "SELECT count(*) FROM churn_risk") == [(1500,)]
    risky = fetch(
        db,
        "SELECT customer_id FROM churn_risk WHERE customer_id % 5 = 0 AND p_yes > 0.9 "
        "ORDER BY p_yes DESC, customer_id",
    )
    listed = [line.split("|")[0].strip() for line in printed.splitlines()[-len(risky) - 1 : -1]]
    assert listed == [str(customer) for (customer,) in risky] and len(risky) >= 3, printed


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
    "churn_queries.sql": check_churn_queries,
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
    """It runs, and sqlml check, right before, found no error in it."""
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder)
    found = check_errors(folder / name, f"duckdb:///{tmp_path / 'sqlml.duckdb'}")
    done = sqlml_run(folder / name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning:" not in done.stderr, done.stderr
    assert [error.render(name) for error in found] == []
    CHECKS[name](tmp_path / "sqlml.duckdb", folder, done.stdout)


TRAINS_ON_EVERY_COLUMN = re.compile(r"\bSELECT\s+\*\s+FROM\b[^;]*?\bTO\s+TRAIN\b", re.I | re.S)


def test_the_programs_shown_train_on_columns_they_name():
    """Every TO TRAIN in README.md, docs/ and examples/*.sql names its columns: a SELECT *
    would make every column but the label a feature, ids included, whatever COLUMN lists (as
    in SQLFlow). examples/sqlflow/ keeps SQLFlow's statements as written (its README says
    which ones train on columns COLUMN leaves out)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *EXAMPLES.glob("*.sql")]
    found = [
        f"{page.relative_to(ROOT)}:{page.read_text().count(chr(10), 0, m.start()) + 1}"
        for page in pages
        for m in TRAINS_ON_EVERY_COLUMN.finditer(page.read_text())
    ]
    assert found == []


def test_the_data_files_are_make_data_outputs(tmp_path: Path):
    shutil.copy(EXAMPLES / "make_data.py", tmp_path)
    subprocess.run([sys.executable, str(tmp_path / "make_data.py")], check=True, timeout=600)
    for name in ("churn.csv", "houses.csv", "load_churn.sql"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name


# ------------------------------------------------------------------------------- pages


def check_pip_install(line: str) -> str | None:
    """``pip install -e '.[a,b]'`` or ``pip install -e .``, with extras the project has; the
    command after its ``&&``, if any."""
    found = PIP_INSTALL.match(line)
    assert found, f"not an install of this project: {line}"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in (found.group(1) or "").split(","):
        assert not extra or extra in extras, f"no extra {extra!r} in pyproject.toml: {line}"
    return found.group(2)


def runnable_script(block: Block) -> str:
    """The block's shell script, less what the test does not run (module doc)."""
    kept = []
    for line in block.text.splitlines():
        if line.startswith("pip install"):
            kept.append(check_pip_install(line) or "")
        elif not line.startswith("export SQLML_DATASOURCE="):
            kept.append(line)
    return "\n".join(kept) + "\n"


@dataclass
class PageRun:
    """One page's blocks, run in order in their own working folder. ``places`` maps what
    varies in the output to what the page shows instead (tests/doc_blocks.py)."""

    blocks: list[Block]
    folder: Path
    datasource: str | None
    places: dict[str, str] = field(default_factory=dict)
    rewrites: Rewrites = field(default_factory=Rewrites)
    done: dict[int, str | None] = field(default_factory=dict)  # index -> failure or None
    last_output: str | None = None

    def until(self, block: Block) -> None:
        """Run every block up to ``block``; fail if it or one before it failed."""
        index = self.blocks.index(block)
        for i in range(index + 1):
            if i not in self.done:
                self.done[i] = self._run(self.blocks[i]) or self._unshown_warning(i)
            if self.done[i] is not None:
                where = "" if i == index else f"an earlier block, {self.blocks[i].id}: "
                pytest.fail(f"{where}{self.done[i]}", pytrace=False)

    def _unshown_warning(self, index: int) -> str | None:
        """A failure if block ``index`` printed a warning that no text block shows."""
        shown = index + 1 < len(self.blocks) and self.blocks[index + 1].lang == "text"
        if self.last_output and not shown and "warning:" in self.last_output:
            return f"{self.blocks[index].id}: a warning the page does not show:\n{self.last_output}"
        return None

    def _run(self, block: Block) -> str | None:
        kind = (block.lang, block.tag)
        if kind in NOT_RUN:
            return self._not_run(block)
        if block.lang == "sh" and not block.tag:
            return self._shell(block, runnable_script(block))
        if kind == ("sql", "example"):
            (self.folder / "example.sql").write_text(block.text)
            return self._shell(block, "sqlml run example.sql\n")
        if block.lang != "text" and FILE_NAME.fullmatch(block.tag):
            later = self.blocks[self.blocks.index(block) + 1 :]
            if not any(b.lang == "sh" and block.tag in b.text for b in later):
                return f"{block.id}: no later sh block runs {block.tag}"
            (self.folder / block.tag).write_text(block.text)
            self.last_output = None
            return None
        if block.lang == "text":
            return self._compare(block)
        return f"{block.id}: a ```{block.lang} {block.tag} block is of no known kind"

    def _shell(self, block: Block, script: str) -> str | None:
        checked = self._check(script)
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=self.folder,
            env=command_env(self.datasource),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # one stream, in the order printed, as on a terminal
            text=True,
            timeout=TIMEOUT,
        )
        self.last_output = placeheld(done.stdout, self.places)
        if done.returncode:
            return f"{block.id}: exit status {done.returncode}:\n{done.stdout}"
        false = [
            error
            for program, found in checked.items()
            for error in false_errors(found, program, failed_in_output(done.stdout, program))
        ]
        if false:
            return f"{block.id}: sqlml check reported errors the run did not: {false}"
        return None

    def _compare(self, block: Block) -> str | None:
        if self.last_output is None:
            return f"{block.id}: a text block must follow a block that ran"
        output, self.last_output = self.last_output, None
        if matches(block.text, output):
            return None
        if REGENERATE:
            self.rewrites.add(block, output)
            return None
        difference = difflib.unified_diff(
            block.text.splitlines(), output.splitlines(), "the page", "the output", lineterm=""
        )
        return (
            f"{block.id}: the output differs from the page's (SQLML_REGENERATE_DOCS=1 "
            "rewrites it: tests/doc_blocks.py):\n" + "\n".join(difference)
        )

    def _check(self, script: str) -> dict[Path, list]:
        """The errors ``sqlml check`` finds, before the script runs, in each program it runs
        (``sqlml run FILE...``), against the tutorial's datasource."""
        url = self.datasource or f"duckdb:///{self.folder / 'sqlml.duckdb'}"
        files = programs_run(script)
        return {self.folder / name: check_errors(self.folder / name, url) for name in files}

    def _not_run(self, block: Block) -> str | None:
        allowed_in = NOT_RUN[(block.lang, block.tag)]
        self.last_output = None
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
        if block.tag == "synopsis":
            return _synopsis_problem(block)
        if block.tag == "suite":
            return _suite_problem(block)
        return None


def _synopsis_problem(block: Block) -> str | None:
    """Whether each line of a synopsis is ``sqlml [COMMAND] ...`` with options that command
    has (what follows a ``#`` is a comment)."""
    commands = re.findall(r"^    (\w+)\b", _help([]), re.MULTILINE)
    for line in block.text.splitlines():
        text = line.split("#")[0]
        words = text.split()
        if words[:1] != ["sqlml"] or len(words) < 2:
            return f"{block.id}: not a sqlml command: {line}"
        command = [] if words[1].startswith("-") else [words[1]]
        if command and command[0] not in commands:
            return f"{block.id}: sqlml has no command {command[0]}: {line}"
        usage = _help(command)
        unknown = [option for option in OPTION.findall(text) if option not in usage]
        if unknown:
            named = " ".join(["sqlml", *command])
            return f"{block.id}: {named} has no option {', '.join(unknown)}: {line}"
    return None


def _help(command: list[str]) -> str:
    """What ``sqlml COMMAND --help`` prints (that of ``sqlml`` for no command)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.suppress(SystemExit):
        main([*command, "--help"])
    return printed.getvalue()


def _suite_problem(block: Block) -> str | None:
    """Whether the block is the test suite's command as .ci/run runs it (less --quiet)."""
    (line,) = block.text.splitlines()
    check_pip_install(line.split(" && ")[0])
    (ci,) = CI_SUITE.findall((ROOT / ".ci" / "run").read_text())
    if line != ci.replace(" --quiet", ""):
        return f"{block.id}: .ci/run runs another test command: {ci}"
    return None


PAGE_BLOCKS = [block for page in PAGES for block in blocks_of(page)]


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


class PageRuns:
    """The runs of the pages, each started when its first block is tested."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self.tmp = tmp
        self.runs: dict[Path, PageRun] = {}
        self.databases: list[str] = []

    def of(self, doc: Path) -> PageRun:
        if doc not in self.runs:
            folder = self.tmp.mktemp(doc.stem)
            shutil.copytree(EXAMPLES, folder / "examples")
            places = {str(folder): "<folder>", os.environ["SQLML_CACHE_DIR"]: "<cache>"}
            datasource = None
            if "mysql" in doc.name:  # a fresh database on the test server, dropped at the end
                server = datasource_url("mysql", folder)
                database = f"sqlml_doc_{uuid.uuid4().hex[:10]}"
                admin_execute(f"CREATE DATABASE {database}")
                self.databases.append(database)
                datasource = f"{server.rsplit('/', 1)[0]}/{database}"
                (places[database],) = READERS_DATABASE.findall(doc.read_text())
            blocks = [b for b in PAGE_BLOCKS if b.doc == doc]
            self.runs[doc] = PageRun(blocks, folder, datasource, places)
        return self.runs[doc]

    def close(self) -> None:
        for run in self.runs.values():
            run.rewrites.write()
        for database in self.databases:
            admin_execute(f"DROP DATABASE IF EXISTS {database}")


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PageRuns]:
    runs = PageRuns(tmp_path_factory)
    yield runs
    runs.close()


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, id=b.id, marks=_marks(b.doc)) for b in PAGE_BLOCKS],
)
def test_page_block(block: Block, page_runs: PageRuns):
    page_runs.of(block.doc).until(block)


BROKEN = """\
```sql broken.sql
SELECT * FROM churn_train TO TRAIN xgboost.gbtree LABEL churned INTO m;
```

```sh
sqlml run broken.sql
```
"""


def test_a_broken_statement_in_a_page_fails_its_block(tmp_path: Path):
    doc = tmp_path / "tutorial-broken.md"
    doc.write_text(BROKEN)
    blocks = blocks_of(doc)
    assert [(b.lang, b.tag, b.line) for b in blocks] == [("sql", "broken.sql", 1), ("sh", "", 5)]
    run = PageRun(blocks, tmp_path, None)
    with pytest.raises(pytest.fail.Exception, match=r"tutorial-broken.md:5: exit status 1"):
        run.until(blocks[1])
    assert "broken.sql:1:1: error: DuckDB: Catalog Error" in run.last_output  # no such table


def test_a_cluster_block_outside_the_kubernetes_tutorial_fails(tmp_path: Path):
    doc = tmp_path / "tutorial.md"
    doc.write_text("```sh cluster\nkubectl get pods\n```\n")
    run = PageRun(blocks_of(doc), tmp_path, None)
    with pytest.raises(pytest.fail.Exception, match=r"belong in tutorial-kubernetes\.md only"):
        run.until(run.blocks[0])


PRINTED = "```sh\nprintf 'a  \\n%s\\n' \"$PWD\"\n```\n\n```text\n{shown}\n```\n"


@pytest.mark.parametrize(
    ("shown", "same"),
    [
        ("a\n<folder>", True),  # spaces at the ends of lines aside
        ("a", False),  # a line missing
        ("a\n<folder>\n", True),
        ("...\n<folder>", True),
        ("...", True),
        ("a\n...\n<folder>", True),  # ... stands for no line too
        ("b\n...", False),
        ("A\n<folder>", False),
        ("a\n<folder>\nb", False),
    ],
)
def test_an_output_block_is_compared_exactly(shown: str, same: bool, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REGENERATE", False)  # a regenerating run too
    doc = tmp_path / "page.md"
    doc.write_text(PRINTED.format(shown=shown))
    run = PageRun(blocks_of(doc), tmp_path, None, {str(tmp_path): "<folder>"})
    if same:
        run.until(run.blocks[1])
    else:
        with pytest.raises(pytest.fail.Exception, match=r"page\.md:5: the output differs"):
            run.until(run.blocks[1])


def test_regenerating_rewrites_the_blocks_that_differ(tmp_path: Path, monkeypatch):
    """Blocks that differ, empty ones too, are written as the output; one that matches
    (``...`` and all) is left as it is."""
    doc = tmp_path / "page.md"
    kept = "```sh\necho 1; echo 2\n```\n\n```text\n...\n2\n```\n"
    page = "# A page\n\n{}\nText.\n\n{}\n{}\nMore text.\n"
    empty = PRINTED.format(shown="").replace("\n\n```\n", "\n```\n")
    doc.write_text(page.format(PRINTED.format(shown="old\nlines"), empty, kept))
    monkeypatch.setattr(sys.modules[__name__], "REGENERATE", True)
    run = PageRun(blocks_of(doc), tmp_path, None, {str(tmp_path): "<folder>"})
    run.until(run.blocks[-1])
    run.rewrites.write()
    new = PRINTED.format(shown="a\n<folder>")
    assert doc.read_text() == page.format(new, new, kept)
    run = PageRun(blocks_of(doc), tmp_path, None, {str(tmp_path): "<folder>"})
    monkeypatch.setattr(sys.modules[__name__], "REGENERATE", False)
    run.until(run.blocks[-1])  # now the same


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("sqlml run FILE.sql --jobs N --retries N   # steps in parallel", None),
        ('sqlml -e "SELECT 1;" [--datasource URL]', None),
        ("sqlml run FILE.sql [--no-such-option]", "sqlml run has no option --no-such-option"),
        ("sqlml -x", "sqlml has no option -x"),
        ("sqlml frobnicate FILE.sql", "sqlml has no command frobnicate"),
        ("python -m sqlml run FILE.sql", "not a sqlml command"),
    ],
)
def test_a_synopsis_holds_commands_and_options_sqlml_has(line: str, problem: str | None, tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text(f"```sh synopsis\n{line}\n```\n")
    found = _synopsis_problem(blocks_of(doc)[0])
    assert found == problem if problem is None else problem in found


def test_what_varies_is_written_as_placeholders():
    output = (
        "sqlml: run 20261204-215921-763ed8: 8 steps, logs in /home/me/.cache/sqlml/runs/"
        "20261204-215921-763ed8\n churn_dnn | 2026-12-04T22:05:50+00:00 | 2026-12-04 22:05:50\n"
        "saved to /work/x/churn_explain.png; Table 'sqlml_doc_1234.churn_tset'"
    )
    places = {"/home/me/.cache/sqlml": "<cache>", "/work/x": "<folder>", "sqlml_doc_1234": "shop"}
    assert placeheld(output, places) == (
        "sqlml: run <run-id>: 8 steps, logs in <cache>/runs/<run-id>\n"
        " churn_dnn | <time> | <time>\nsaved to <folder>/churn_explain.png; Table 'shop.churn_tset'"
    )
